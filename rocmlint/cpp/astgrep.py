"""The `ast-grep` matcher: C, C++, CUDA and HIP sources through ast-grep-py.

Spec keys:
  rule:        an ast-grep rule (pattern / kind / regex, inside / has / ..., all / any / not)
  constraints: per-metavariable rules, e.g. {MASK: {regex: '^0[xX][fF]{8}[uU]?$'}}
The file is parsed once as C++ after CUDA-only syntax is blanked (see rocmlint.cpp.cuda_syntax).
Every metavariable a check's message or rewrite names is captured.

Two traps of ast-grep that the check files work around:
  - `constraints` are applied after the whole rule matched, not per branch of an `any`: a
    constraint on a metavariable that one branch binds rejects the node even when another
    branch would have matched. Put `regex:` next to the `pattern: $VAR` in each branch.
  - `$VAR` only binds named nodes; `$$VAR` also binds keyword tokens such as `asm`.
A rule that names an unknown node kind or an unbound metavariable is rejected when the
catalog is loaded. A pattern that does not parse still matches nothing without an error,
which is why every check carries invalid examples that must be flagged.
"""

from __future__ import annotations

import re
from typing import Iterator

from rocmlint.cpp.wave import KEEPS_TO_32_LANE_GROUPS, keeps_to_32_lane_groups
from rocmlint.matchers import Capture, Match, check_keys

# The gate of a `hip-only` check's hit in code nvcc compiles too; the project pass lifts it where
# the project's ROCm build alone compiles the file.
NVCC_COMPILES_IT = "code nvcc compiles as well, where what the check flags cannot be what it means under HIP"
# Gates the per-file pass sets that the project pass may lift with what the project says.
PROJECT_DECIDES = (NVCC_COMPILES_IT, KEEPS_TO_32_LANE_GROUPS)
_METAVAR = re.compile(r"\$([A-Z_][A-Z0-9_]*)")


class AstGrepMatcher:
    def __init__(
        self, spec: dict, where: str, capture_names: tuple[str, ...] = (), check_amd_side: bool = False, hip_only: bool = False
    ):
        from rocmlint.catalog.loader import CheckFileError

        check_keys(spec, {"rule": dict, "constraints": dict, "context": str}, where, required=("rule",))
        self.check_amd_side = check_amd_side
        self.hip_only = hip_only
        # "wavefront": a hit counts only where the code around it also works with the whole
        # hardware wavefront (rocmlint.cpp.wave); $WAVE names that site. Elsewhere it is gated
        # as keeping to 32-lane groups, with the check's `message-when: no-wave-site`; the
        # project pass reports it where the project has no AMD side.
        self.context = spec.get("context")
        if self.context not in (None, "wavefront"):
            raise CheckFileError(f"{where}.context: must be 'wavefront', got {self.context!r}")
        self.config = {"rule": spec["rule"]}
        if "constraints" in spec:
            self.config["constraints"] = spec["constraints"]
        self.capture_names = capture_names
        self._validate(where)

    def _validate(self, where: str) -> None:
        """ast-grep builds a rule only when it is first used; build it now so that a broken
        rule is an error naming its check file instead of a crash on the first C++ file."""
        from ast_grep_py import SgRoot

        from rocmlint.catalog.loader import CheckFileError

        try:
            SgRoot("", "cpp").root().find_all(self.config)
        except BaseException as exc:  # noqa: B036 - ast-grep panics are BaseExceptions
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            message = str(exc).split("Stack backtrace")[0]
            detail = " ".join(line.strip() for line in message.splitlines() if line.strip())
            raise CheckFileError(f"{where}: ast-grep rejects the rule: {detail}") from None

    def find(self, source) -> Iterator[Match]:
        gates = None  # read the preprocessor structure only for files with a hit
        for node in source.cpp_root.find_all(self.config):
            if gates is None:
                gates = source.preprocessor_gates
            rng = node.range()
            captures = {}
            for name in self.capture_names:
                sub = node.get_match(name)
                if sub is not None:
                    r = sub.range()
                    captures[name] = Capture(source.text[r.start.index : r.end.index], r.start.index, r.end.index)
            variant = None
            line = source.position(rng.start.index)[0]
            gate = gates.reason(line, self.check_amd_side)
            if self.context == "wavefront":
                site = wavefront_site(source, rng.start.index, captures.get("NAME"))
                if site is not None:
                    captures["WAVE"] = Capture(site.describe(), rng.start.index, rng.end.index)
                else:
                    # Two 32-lane groups per 64-lane wavefront compute the same: reported only
                    # where the project has no AMD side (the project pass lifts the gate).
                    variant = "no-wave-site"
                    gate = keeps_to_32_lane_groups(gate)
            if gate is None and self.hip_only and not gates.on_amd_side(line) and not (source.path or "").lower().endswith(".hip"):
                gate = NVCC_COMPILES_IT
            yield Match(rng.start.index, rng.end.index, gate=gate, captures=captures, variant=variant)


def wavefront_site(source, offset: int, name=None):
    """The whole-wavefront site that meets the code at `offset` (rocmlint.cpp.wave); for a
    definition outside any function (`#define WARP_SIZE 32`), the first one that meets a use of
    `name` in the file."""
    context = source.wave_context
    site = context.at(offset)
    if site is None and name is not None:
        uses = [m.start() for m in re.finditer(rf"\b{re.escape(name.text)}\b", source.text) if m.start() != name.start]
        site = context.for_any(uses)
    return site


def metavariables(*texts: str | None) -> tuple[str, ...]:
    names: list[str] = []
    for text in texts:
        for name in _METAVAR.findall(text or ""):
            if name not in names:
                names.append(name)
    return tuple(names)
