"""The `python` matcher: imports and calls, found on the `ast` tree with alias-aware names.

Spec keys (one of `import` / `call` / `method` is needed):
  import:   [module, ...]     `import m`, `import m.sub`, `from m import x`, `from m.sub import x`
  scope:    module | any      module: only imports that run at import time (not in functions)
  call:     [qualified.name]  calls through any alias, and `functools.partial(name, ...)`
  method:   [attr]            `anything.attr(...)`, for methods whose receiver cannot be named
  keywords: {kw: [value, ...]}  every listed keyword must be given as one of these literals
Captures: $MODULE (imports), $CALLEE (calls), and $<KW> for each keyword's value node.
"""

from __future__ import annotations

import ast
from typing import Iterator

from rocmlint.matchers import Capture, Match, check_keys


class PythonMatcher:
    def __init__(self, spec: dict, where: str):
        from rocmlint.checks_loader import CheckFileError

        check_keys(spec, {"import": list, "scope": str, "call": list, "method": list, "keywords": dict}, where)
        if not any(k in spec for k in ("import", "call", "method")):
            raise CheckFileError(f"{where}: needs one of import, call, method")
        if spec.get("scope", "any") not in ("module", "any"):
            raise CheckFileError(f"{where}.scope: must be module or any")
        self.modules = tuple(spec.get("import", ()))
        self.module_scope_only = spec.get("scope") == "module"
        self.calls = frozenset(spec.get("call", ()))
        self.methods = frozenset(spec.get("method", ()))
        self.keywords = {k: tuple(v) for k, v in spec.get("keywords", {}).items()}
        for key, values in self.keywords.items():
            if not isinstance(values, tuple) or not values:
                raise CheckFileError(f"{where}.keywords.{key}: must be a list of literal values")

    def find(self, source) -> Iterator[Match]:
        index = source.python_index
        if self.modules:
            yield from self._imports(source, index)
        if self.calls or self.methods:
            yield from self._calls(source, index)

    def _span(self, source, node: ast.AST) -> tuple[int, int]:
        start = source.offset(node.lineno, source.byte_col_to_char(node.lineno, node.col_offset))
        end = source.offset(node.end_lineno, source.byte_col_to_char(node.end_lineno, node.end_col_offset))
        return start, end

    def _capture(self, source, node: ast.AST) -> Capture:
        start, end = self._span(source, node)
        return Capture(source.text[start:end], start, end)

    def _wanted_module(self, name: str | None) -> bool:
        return bool(name) and any(name == m or name.startswith(m + ".") for m in self.modules)

    def _imports(self, source, index) -> Iterator[Match]:
        for node in index.imports:
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names if self._wanted_module(a.name)]
            else:
                names = [node.module] if node.level == 0 and self._wanted_module(node.module) else []
            if not names:
                continue
            if self.module_scope_only and not index.at_module_level(node):
                continue
            start, end = self._span(source, node)
            yield Match(
                start,
                end,
                gate=index.gate(node, import_guard=True),
                captures={"MODULE": Capture(names[0], start, end)},
            )

    def _callee_matches(self, index, func: ast.AST) -> bool:
        if self.calls and index.qualified_name(func) in self.calls:
            return True
        return bool(self.methods) and isinstance(func, ast.Attribute) and func.attr in self.methods

    def _calls(self, source, index) -> Iterator[Match]:
        for call in index.calls:
            func = call.func
            if not self._callee_matches(index, func):
                # functools.partial(torch.compile, mode=...) configures the same call.
                if not (call.args and index.qualified_name(func) == "functools.partial"
                        and self._callee_matches(index, call.args[0])):
                    continue
                func = call.args[0]
            captures = {"CALLEE": self._capture(source, func)}
            if not self._keywords_match(source, call, captures):
                continue
            start, end = self._span(source, call)
            yield Match(start, end, gate=index.gate(call), captures=captures)

    def _keywords_match(self, source, call: ast.Call, captures: dict) -> bool:
        given = {kw.arg: kw.value for kw in call.keywords if kw.arg}
        for name, values in self.keywords.items():
            value = given.get(name)
            if not isinstance(value, ast.Constant) or value.value not in values:
                return False
            captures[name.upper()] = self._capture(source, value)
        return True
