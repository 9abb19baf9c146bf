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
from dataclasses import dataclass, field

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
_WARP_SIZE_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w*(?i:warp_?size|warpsize|threads_?per_?warp|lanes_?per_?warp)\w*)[ \t]+\(?\s*(\d+)\s*\)?[ \t]*$", re.M)


@dataclass
class _Function:
    start: int
    end: int
    name: str | None
    sites: list[tuple[int, str, str]] = field(default_factory=list)  # (offset, description, kind) of its own
    calls: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class WaveSite:
    offset: int
    line: int
    what: str  # "`warpSize`", "`__ballot_sync`", "`__shfl_up_sync` without a width"

    def describe(self) -> str:
        return f"{self.what} (line {self.line})"


class WaveContext:
    """Per function: the first whole-wavefront site that reaches it (see the module docstring)."""

    def __init__(self, spans: list[tuple[int, int, WaveSite | None]]):
        self._spans = sorted(spans)
        self._starts = [s for s, _, _ in self._spans]

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
    functions: list[_Function] = []
    for node in root.find_all(kind="function_definition"):
        r = node.range()
        function = _Function(r.start.index, r.end.index, _function_name(node))
        for call in node.find_all(kind="call_expression"):
            callee = call.field("function")
            if callee is None:
                continue
            name = _simple_name(callee.text())
            function.calls.add(name)
            arguments = call.field("arguments")
            count = len([c for c in arguments.children() if c.is_named() and c.kind() != "comment"]) if arguments else 0
            where = call.range().start.index
            if name in _VOTES:
                function.sites.append((where, f"`{name}`", "vote"))
            elif name in _CROSSING_SHUFFLES and count < _CROSSING_SHUFFLES[name]:
                kind = "scan" if name.startswith("__shfl_up") else "read"
                function.sites.append((where, f"`{name}` without a width", kind))
            elif name == "__lane_id" or _HARDWARE_WARP_NAME.search(name):
                function.sites.append((where, f"`{name}()`", "number"))
        for identifier in node.find_all(kind="identifier"):
            word = identifier.text()
            if word == "warpSize" or word in hardware_constants or _HARDWARE_WARP_NAME.fullmatch(word):
                function.sites.append((identifier.range().start.index, f"`{word}`", "number"))
        body = text[r.start.index : r.end.index]
        for hit in re.finditer(r"%%?laneid\b", body):
            function.sites.append((r.start.index + hit.start(), "PTX `%laneid`", "number"))
        function.sites = sorted(
            (site for site in function.sites if gates.reason(source.position(site[0])[0], True) is None),
            key=lambda site: (_PRIORITY[site[2]], site[0]),
        )
        functions.append(function)
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
    return WaveContext(spans)


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
