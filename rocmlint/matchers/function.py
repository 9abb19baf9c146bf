"""The `function` matcher: the escape hatch for logic the declarative matchers cannot say.

Spec keys:
  function: "package.module:callable" — called as callable(source, matcher) and yields Match
            objects; `matcher.check_amd_side` says how to read preprocessor gates.
The callable must live inside rocmlint (checks never load code from the scanned project).
"""

from __future__ import annotations

import importlib
from typing import Iterator

from rocmlint.matchers import Match, check_keys


class FunctionMatcher:
    def __init__(self, spec: dict, where: str, check_amd_side: bool = False):
        self.check_amd_side = check_amd_side
        from rocmlint.catalog.loader import CheckFileError

        check_keys(spec, {"function": str}, where, required=("function",))
        module_name, _, attr = spec["function"].partition(":")
        if not module_name.startswith("rocmlint.") or not attr:
            raise CheckFileError(f"{where}.function: must be 'rocmlint.module:callable'")
        try:
            self.function = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise CheckFileError(f"{where}.function: cannot load {spec['function']}: {exc}") from exc

    def find(self, source) -> Iterator[Match]:
        return self.function(source, self)
