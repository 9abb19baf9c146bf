"""Matchers find a check's pattern in a SourceFile and say whether each hit is gated.

A check's `match:` names exactly one matcher kind; its mapping is that matcher's spec,
validated when the catalog is loaded (unknown keys are errors naming the check file). This
package holds what every kind shares and the two kinds that read any language (`text`,
`function`); the Python and C/C++ matchers live with their language (rocmlint.python.matcher,
rocmlint.cpp.astgrep), and the engine picks one per check.
"""

from __future__ import annotations

from typing import Iterable, Protocol

from rocmlint.records import field, record


@record
class Capture:
    text: str
    start: int  # code-point offsets into the file
    end: int


@record
class Match:
    start: int
    end: int
    gate: str | None  # why the code is already gated for one GPU stack (None: it is not)
    captures: dict[str, Capture] = field(default_factory=dict)
    node: object = field(default=None, compare=False, repr=False)  # the ast node, for Python rewrites
    # Which of the check's other messages says this hit (`message-when`), or None for `message`.
    variant: str | None = None


class Matcher(Protocol):
    def find(self, source) -> Iterable[Match]: ...


def check_keys(spec: dict, allowed: dict[str, type | tuple], where: str, required: tuple[str, ...] = ()) -> None:
    """Reject unknown or mistyped keys in a matcher spec, naming the check file and key."""
    from rocmlint.catalog.loader import CheckFileError

    for key, value in spec.items():
        if key not in allowed:
            raise CheckFileError(f"{where}: unknown key {key} (known keys: {', '.join(allowed)})")
        if not isinstance(value, allowed[key]):
            raise CheckFileError(f"{where}.{key}: wrong type {type(value).__name__}")
    for key in required:
        if key not in spec:
            raise CheckFileError(f"{where}: missing key {key}")
