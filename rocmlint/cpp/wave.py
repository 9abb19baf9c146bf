"""Where code also works with the whole hardware wavefront: the context that makes a 32-lane
assumption wrong on AMD.

Code written for 32-lane warps that keeps to 32-lane groups everywhere (`lane = tid & 31`,
`warp = tid >> 5`, reductions from offset 16, shuffles of width 32) computes the same results
on a 64-lane CDNA wavefront: each wavefront holds two such groups, and shuffles with offsets
below 32 or a width of 32 never cross between them. It goes wrong where that numbering meets
something that works with the whole wavefront:

- `warpSize` (64 on CDNA), `__lane_id()`, PTX `%laneid`, or a project constant that names the
  hardware warp size (`hw_warp_size`, `ggml_cuda_get_physical_warp_size()`, a `WARP_SIZE`
  the file defines as 64 for AMD);
- a ballot, `__activemask()`, `__any`/`__all`: one bit per lane of the whole wavefront;
- a shuffle that reads across the 32-lane boundary: `__shfl_up*` without a width (lane 32
  reads lane 31), or `__shfl`/`__shfl_sync` without a width (a broadcast or gather from a
  lane of the other half).

`wave_context(source)` finds, per function, the first such site in the function itself, in a
function it calls, or in a function that calls it (calls by name within the file), so that
the wave-size checks report a 32-lane assumption only where it meets one. Sites in code HIP
never compiles (the NVIDIA side of a stack test) do not count.
"""

from __future__ import annotations

import bisect
import re

from rocmlint.records import field, record

# The gate of a 32-lane hit that meets no whole-wavefront site: on a 64-lane wavefront such code
# holds two 32-lane groups and computes the same. The project pass lifts it where the project
# has no AMD side (rocmlint.build.project_root.project_kind): there nothing decides yet which of
# the two the code means on AMD, and the port must.
KEEPS_TO_32_LANE_GROUPS = (
    "keeps to 32-lane groups: nothing in this function, its callers or its callees works with the whole "
    "wavefront, so a 64-lane wavefront holds two such groups and computes the same (reported where the "
    "project has no AMD side yet)"
)


def keeps_to_32_lane_groups(gate: str | None) -> str:
    """The gate of a 32-lane hit that meets no whole-wavefront site, after the preprocessor's
    (`gate`, or None): the preprocessor's reason comes first, so that the project pass, which
    reads the conditions again with the project's macros, still knows the hit keeps to 32-lane
    groups where the project lifts that reason (rocmlint.project.gating)."""
    return KEEPS_TO_32_LANE_GROUPS if gate is None else f"{gate}; {KEEPS_TO_32_LANE_GROUPS}"


# Names of project constants and functions that stand for the hardware warp size.
_HARDWARE_WARP_NAME = re.compile(r"(?i)(?:hw|hardware|physical|native)_?warp_?size|warp_?size_?(?:hw|hardware|physical)")
# Votes whose result has one bit per lane of the whole wavefront. `__any`/`__all` are not among
# them: their one-bit answer is the same for a 32-lane group when both halves agree, which is
# how they are used (skip and retry votes).
_VOTES = frozenset({"__ballot", "__ballot_sync", "__activemask", "__match_any_sync", "__match_all_sync"})
# Which site to name when several meet a function: the numbering of lanes first, then votes,
# then reads from another lane; a scan's `__shfl_up` is usually guarded (`if (lane >= d)`).
_PRIORITY = {"number": 0, "vote": 1, "read": 2, "scan": 3}
# Shuffles and the argument count at which the width is given (mask-less / _sync forms).
_CROSSING_SHUFFLES = {"__shfl_up": 3, "__shfl_up_sync": 4, "__shfl": 3, "__shfl_sync": 4}
_OWN_WARP_SIZE = re.compile(r"\b(?:constexpr|const|static|int|unsigned|auto|uint32_t|int32_t|size_t)\b[^;=(){}]*\bwarpSize\s*[={]")
_WARP_SIZE_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w*(?i:warp_?size|warpsize|threads_?per_?warp|lanes_?per_?warp)\w*)[ \t]+\(?\s*(\d+)\s*\)?[ \t]*$", re.M)


@record(mutable=True)
class _Function:
    start: int
    end: int
    name: str | None
    sites: list[tuple[int, str, str]] = field(default_factory=list)  # (offset, description, kind) of its own
    calls: set[str] = field(default_factory=set)
    body: int = -1  # where its body starts


@record
class FunctionSpan:
    """A function of the file: where it is, its name, and where its code runs: "device"
    (`__global__`, `__device__`), "host" (neither, or `__host__` alone) or "both"."""

    start: int
    end: int
    name: str | None
    runs_on: str


@record
class WaveSite:
    offset: int
    line: int
    what: str  # "`warpSize`", "`__ballot_sync`", "`__shfl_up_sync` without a width"

    def describe(self) -> str:
        return f"{self.what} (line {self.line})"


class WaveContext:
    """Per function: the first whole-wavefront site that reaches it (see the module docstring)."""

    def __init__(self, spans: list[tuple[int, int, WaveSite | None]], functions: tuple[FunctionSpan, ...] = ()):
        self._spans = sorted(spans)
        self._starts = [s for s, _, _ in self._spans]
        self.functions = functions  # every function of the file, in order

    def at(self, offset: int) -> WaveSite | None:
        """The whole-wavefront site that meets the innermost function containing `offset`."""
        index = bisect.bisect_right(self._starts, offset) - 1
        best = None
        while index >= 0:
            start, end, site = self._spans[index]
            if start <= offset < end:
                best = (start, site)
                break
            index -= 1
        return best[1] if best else None

    def for_any(self, offsets: list[int]) -> WaveSite | None:
        for offset in offsets:
            site = self.at(offset)
            if site is not None:
                return site
        return None


def wave_context(source) -> WaveContext:
    root = source.cpp_root
    gates = source.preprocessor_gates
    text = source.text
    hardware_constants = _hardware_warp_constants(text, gates, source)
    # One walk of the tree for every node that can matter (a walk per function costs hundreds of
    # walks in a file of kernels); identifiers are filtered by ast-grep, so the thousands of
    # others never become Python objects.
    # A file that declares a `warpSize` of its own (`constexpr int warpSize = 32;`) means its own
    # constant by the name, not HIP's run-time wavefront size.
    own_warp_size = "warpSize" in text and _OWN_WARP_SIZE.search(source.code_only)
    names = sorted(({"warpSize"} if not own_warp_size else set()) | hardware_constants)
    word = rf"^(?:{'|'.join(map(re.escape, names))})$|^(?:{_HARDWARE_WARP_NAME.pattern})$"
    nodes = root.find_all({"rule": {"any": [
        {"kind": "function_definition"}, {"kind": "call_expression"}, {"kind": "identifier", "regex": word},
    ]}})
    functions: list[_Function] = []
    for node in nodes:
        if node.kind() == "function_definition":
            r = node.range()
            body = node.field("body")
            functions.append(_Function(r.start.index, r.end.index, _function_name(node),
                                       body=body.range().start.index if body is not None else r.start.index))
    # A hit belongs to every function that holds it (a function nested in another, to both).
    functions.sort(key=lambda f: (f.start, -f.end))
    holders = _Holders(functions)
    for node in nodes:
        kind = node.kind()
        if kind == "function_definition":
            continue
        where = node.range().start.index
        owners = holders.at(where)
        if not owners:
            continue
        if kind == "identifier":
            text_of = node.text()
            for function in owners:
                function.sites.append((where, f"`{text_of}`", "number"))
            continue
        callee = node.field("function")
        if callee is None:
            continue
        name = _simple_name(callee.text())
        site = None
        if name in _VOTES:
            site = (where, f"`{name}`", "vote")
        elif name in _CROSSING_SHUFFLES:
            arguments = node.field("arguments")
            count = len([c for c in arguments.children() if c.is_named() and c.kind() != "comment"]) if arguments else 0
            if count < _CROSSING_SHUFFLES[name]:
                kind = "scan" if name.startswith("__shfl_up") else "read"
                site = (where, f"`{name}` without a width", kind)
        elif name == "__lane_id" or _HARDWARE_WARP_NAME.search(name):
            site = (where, f"`{name}()`", "number")
        for function in owners:
            function.calls.add(name)
            if site is not None:
                function.sites.append(site)
    if "laneid" in text:
        for hit in re.finditer(r"%%?laneid\b", text):
            for function in holders.at(hit.start()):
                function.sites.append((hit.start(), "PTX `%laneid`", "number"))
    for function in functions:
        function.sites = sorted(
            (site for site in function.sites if gates.reason(source.position(site[0])[0], True) is None),
            key=lambda site: (_PRIORITY[site[2]], site[0]),
        )
    by_name: dict[str, list[_Function]] = {}
    for function in functions:
        if function.name:
            by_name.setdefault(function.name, []).append(function)
    callers: dict[int, list[_Function]] = {}
    for function in functions:
        for callee_name in function.calls:
            for callee in by_name.get(callee_name, ()):
                if callee is not function:
                    callers.setdefault(id(callee), []).append(function)
    spans = []
    for function in functions:
        reach = [function] + [c for name in function.calls for c in by_name.get(name, ()) if c is not function]
        reach += callers.get(id(function), [])
        candidates = [s for other in reach for s in other.sites[:1]]
        site = None
        if candidates:
            offset, what, _ = min(candidates, key=lambda s: (_PRIORITY[s[2]], 0 if s in function.sites else 1, s[0]))
            site = WaveSite(offset, source.position(offset)[0], what)
        spans.append((function.start, function.end, site))
    code = source.code_only
    spans_of = tuple(FunctionSpan(f.start, f.end, f.name, _runs_on(code, f.start, f.body)) for f in functions)
    return WaveContext(spans, spans_of)


# Execution-space qualifiers, and the project macros that stand for them (`CUTLASS_DEVICE`,
# `CUTE_HOST_DEVICE`, `C10_HOST_DEVICE`): read by their words.
_QUALIFIER = re.compile(r"\b(__global__|__device__|__host__|[A-Z][A-Z0-9_]*(?:DEVICE|GLOBAL|KERNEL)[A-Z0-9_]*)\b")


def _runs_on(code: str, start: int, body: int) -> str:
    """Where a function runs, from the qualifiers of its declaration: the blanked CUDA syntax
    leaves them before the node the grammar sees, so the text back to the end of the previous
    declaration is read too."""
    before = max(code.rfind(";", 0, start), code.rfind("}", 0, start), code.rfind("{", 0, start))
    words = " ".join(_QUALIFIER.findall(code[before + 1 : body]))
    device = "__global__" in words or "__device__" in words or re.search(r"DEVICE|GLOBAL|KERNEL", words)
    host = "__host__" in words or "HOST" in words
    if not device:
        return "host"
    return "both" if host and "__global__" not in words else "device"


class _Holders:
    """The functions that hold an offset, innermost first, among functions sorted by start
    (and, at the same start, outermost first): each function's parent is the innermost one
    around it."""

    def __init__(self, functions: list[_Function]):
        self._functions = functions
        self._starts = [f.start for f in functions]
        self._parents: list[int | None] = []
        open_: list[int] = []
        for index, function in enumerate(functions):
            while open_ and functions[open_[-1]].end <= function.start:
                open_.pop()
            self._parents.append(open_[-1] if open_ else None)
            open_.append(index)

    def at(self, offset: int) -> list[_Function]:
        index = bisect.bisect_right(self._starts, offset) - 1
        while index is not None and index >= 0 and not offset < self._functions[index].end:
            index = self._parents[index]
        held = []
        while index is not None and index >= 0:
            held.append(self._functions[index])
            index = self._parents[index]
        return held


def _function_name(node) -> str | None:
    declarator = node.field("declarator")
    while declarator is not None and declarator.kind() not in ("identifier", "field_identifier", "qualified_identifier"):
        declarator = declarator.field("declarator")
    return _simple_name(declarator.text()) if declarator is not None else None


def _simple_name(text: str) -> str:
    """`ns::warp_reduce<float>` -> `warp_reduce`."""
    text = text.split("<", 1)[0]
    return text.rsplit("::", 1)[-1].rsplit(".", 1)[-1].rsplit(">", 1)[-1].strip()


def _hardware_warp_constants(text: str, gates, source) -> set[str]:
    """Warp-size macros this file defines as 64 for AMD (`#ifdef USE_ROCM` `#define WARP_SIZE
    64`): on AMD they are the hardware wavefront size."""
    names = set()
    for hit in _WARP_SIZE_DEFINE.finditer(text):
        if hit.group(2) == "64":
            line = source.position(hit.start(1))[0]
            if gates.reason(line, True) is None:
                names.add(hit.group(1))
    return names
