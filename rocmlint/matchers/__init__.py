"""Matchers find a check's pattern in a SourceFile and say whether each hit is gated.

A check's `match:` names exactly one matcher kind; its mapping is that matcher's spec,
validated when the catalog is loaded (unknown keys are errors naming the check file).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Protocol


@dataclass(frozen=True)
class Capture:
    text: str
    start: int  # code-point offsets into the file
    end: int


@dataclass(frozen=True)
class Match:
    start: int
    end: int
    gate: str | None  # why the code is already gated for one GPU stack (None: it is not)
    captures: dict[str, Capture] = field(default_factory=dict)
    node: object = field(default=None, compare=False, repr=False)  # the ast node, for Python rewrites


class Matcher(Protocol):
    def find(self, source) -> Iterable[Match]: ...


def compile_matcher(check) -> Matcher:
    from rocmlint.checks_loader import CheckFileError

    kind, spec = check.matcher_kind, check.matcher_spec
    where = f"{check.source}: match.{kind}"
    if kind == "python":
        from rocmlint.matchers.python import PythonMatcher

        return PythonMatcher(spec, where)
    if kind == "ast-grep":
        from rocmlint.matchers.astgrep import AstGrepMatcher, metavariables

        rewrite = check.fix.rewrite if check.fix else None
        names = metavariables(check.message, rewrite.template if rewrite else None)
        if rewrite and rewrite.capture and rewrite.capture not in names:
            names += (rewrite.capture,)
        return AstGrepMatcher(spec, where, names, check.check_amd_side)
    if kind == "text":
        from rocmlint.matchers.text import TextMatcher

        return TextMatcher(spec, where, check.check_amd_side)
    if kind == "function":
        from rocmlint.matchers.function import FunctionMatcher

        return FunctionMatcher(spec, where, check.check_amd_side)
    raise CheckFileError(f"{where}: unknown matcher kind")


def check_keys(spec: dict, allowed: dict[str, type | tuple], where: str, required: tuple[str, ...] = ()) -> None:
    """Reject unknown or mistyped keys in a matcher spec, naming the check file and key."""
    from rocmlint.checks_loader import CheckFileError

    for key, value in spec.items():
        if key not in allowed:
            raise CheckFileError(f"{where}: unknown key {key} (known keys: {', '.join(allowed)})")
        if not isinstance(value, allowed[key]):
            raise CheckFileError(f"{where}.{key}: wrong type {type(value).__name__}")
    for key in required:
        if key not in spec:
            raise CheckFileError(f"{where}: missing key {key}")
