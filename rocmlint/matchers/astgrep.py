"""The `ast-grep` matcher: C, C++, CUDA and HIP sources through ast-grep-py.

Spec keys:
  rule:        an ast-grep rule (pattern / kind / regex, inside / has / ..., all / any / not)
  constraints: per-metavariable rules, e.g. {MASK: {regex: '^0[xX][fF]{8}[uU]?$'}}
The file is parsed once as C++ after CUDA-only syntax is blanked (see rocmlint.cuda_syntax).
Every metavariable a check's message or rewrite names is captured. A pattern that does not
parse matches nothing and raises no error, which is why every check carries invalid examples
that must be flagged.
"""

from __future__ import annotations

import re
from typing import Iterator

from rocmlint.matchers import Capture, Match, check_keys

_METAVAR = re.compile(r"\$([A-Z_][A-Z0-9_]*)")


class AstGrepMatcher:
    def __init__(self, spec: dict, where: str, capture_names: tuple[str, ...] = ()):
        check_keys(spec, {"rule": dict, "constraints": dict}, where, required=("rule",))
        self.config = {"rule": spec["rule"]}
        if "constraints" in spec:
            self.config["constraints"] = spec["constraints"]
        self.capture_names = capture_names

    def find(self, source) -> Iterator[Match]:
        gates = source.preprocessor_gates
        for node in source.cpp_root.find_all(self.config):
            rng = node.range()
            captures = {}
            for name in self.capture_names:
                sub = node.get_match(name)
                if sub is not None:
                    r = sub.range()
                    captures[name] = Capture(source.text[r.start.index : r.end.index], r.start.index, r.end.index)
            yield Match(rng.start.index, rng.end.index, gated=gates.is_gated(rng.start.line + 1), captures=captures)


def metavariables(*texts: str | None) -> tuple[str, ...]:
    names: list[str] = []
    for text in texts:
        for name in _METAVAR.findall(text or ""):
            if name not in names:
                names.append(name)
    return tuple(names)
