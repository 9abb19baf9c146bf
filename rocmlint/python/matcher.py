"""The `python` matcher: imports, calls, settings, environment variables and names, found on
the `ast` tree with alias-aware names and simple data flow (rocmlint.python.index).

Spec keys (at least one of import / call / method / set / env / reference):
  import:     [module, ...]     `import m`, `import m.sub`, `from m import x`, `from m.sub import x`,
                                `from pkg import m` for a listed `pkg.m`, and `importlib.import_module("m")`
  not-import: [module, ...]     with `import`: these modules (and their submodules) are not matched,
                                though a listed module holds them (another check owns them)
  gate-named: regex             a hit inside a function or class, or in a file, whose name matches
                                (searched) is gated: code named for the API it
                                uses is that API's own path (`class TensorRTBackend`, `export_trt`)
  scope:      module | function | any   module: only what runs at import time (not in function
                                bodies); function: only what runs when a function is called
  caught-only-by: [Exception, ...]  only imports inside a `try` whose handlers catch nothing but
                                these (that `try` is then the finding, not a gate)
  call:       [qualified.name]  calls through any alias, and `functools.partial(name, ...)`
  method:     [attr]            `anything.attr(...)`, for methods whose receiver cannot be named
  keywords:   {kw: [value, ...]}  every listed argument must be able to take one of these values,
                                given by keyword, by position (see `positional`) or in `**dict`,
                                as a literal or through the module's data flow
  positional: [name, ...]       the names of the callee's leading positional parameters
  within:     [qualified.name]  only calls inside the body of `with <one of these>(...)`
  within-callees: true          with `within`: also calls in the functions that body calls, one level
                                deep (a function of this module, a nested one, or `self.method()`
                                of the same class)
  condition-method: [attr]      `anything.attr()` read as a truth value (`if x.any():`, `while`,
                                `assert`, `not`, `x if c else y`), where a tensor's value goes to the host
  condition-call: [qualified.name]  the same for calls through any alias (`if torch.all(mask):`)
  caught-by:  [Exception, ...]  a call inside a `try` (same function) with a handler for one of
                                these (or a bare `except:`), or `with suppress(...)` of one, is
                                gated; `NVMLError` also names `NVMLError_LibraryNotFound`
  installed-by: [distribution, ...]  with `import`: an import is gated where the file's
                                project declares one of these as a dependency (it is installed
                                there, so the import succeeds)
  set:        [qualified.setting]  a setting given a value: `a.b = v`, `setattr`, `a.patch(...)`,
                                `torch.compile(options={...})` (for torch._inductor.config)
  values:     [value, ...]      with `set`: only when the value can be one of these
  env:        [NAME, ...]       an environment variable written: `os.environ[...] = v`,
                                `setdefault`, `update`, `putenv`, `setenv`, dict literals
  value-regex: regex            with `env`: only when the value's text matches (named groups
                                become captures); with `call`, the same of the first argument
  reference:  [qualified.name]  a use of a name (`torch.float8_e4m3fn`), except where it is only
                                compared with (`dtype == ...`, `dtype in (...)`) or a dict key
  not-argument-of: [qualified.name or .method]  with `reference`: not where the name is an
                                argument of one of these calls (`torch.finfo(x)`, `t.view(x)`)
  not-in-tables: true           with `reference`: not as a member of a list, tuple or set
                                literal, nor a dict value (tables of names, not a choice of one)
  not-named:  regex             with `reference`: not where a name the use is given to, or lies
                                in, matches (searched): the assignment target, keyword or called
                                function it is given to, the enclosing functions and classes, the
                                file's stem
Captures: $MODULE (imports), $CALLEE (calls), $<KW> (the value found for each keyword) and
$<KW>_ARG (the argument as written, when every value it can take is one of the listed values:
what a rewrite may replace), $WITHIN (the `with` callee), $WHERE (where the call is, said for a
`within` context: inside it, or in a function called inside it), $SETTING and $VALUE (set),
$VAR and $VALUE (env), $NAME (reference).
"""

from __future__ import annotations

import ast
import os
import re
from typing import Iterator

from rocmlint.matchers import Capture, Match, check_keys
from rocmlint.python.index import UNKNOWN, may_name
from rocmlint.records import replace

_FORMS = ("import", "call", "method", "condition-method", "condition-call", "set", "env", "reference")
_PARTIAL_TAIL = frozenset({"partial"})
_IMPORT_CALLS = frozenset({"importlib.import_module", "__import__"})
_IMPORT_TAILS = frozenset({"import_module", "__import__"})


class PythonMatcher:
    def __init__(self, spec: dict, where: str, by_module_name: bool = True):
        from rocmlint.catalog.loader import CheckFileError

        # Whether a module named for one GPU stack (`rocm_attention.py`) gates its hits; not for
        # checks whose hazard is on NVIDIA, where such modules are where the hazard lives.
        self.by_module_name = by_module_name

        check_keys(
            spec,
            {
                "import": list, "not-import": list, "scope": str, "caught-only-by": list, "call": list, "method": list,
                "keywords": dict, "positional": list, "within": list, "within-callees": bool,
                "condition-method": list, "condition-call": list, "set": list, "values": list,
                "env": list, "value-regex": str, "reference": list, "caught-by": list, "installed-by": list,
                "not-argument-of": list, "not-in-tables": bool, "not-named": str, "gate-named": str,
            },
            where,
        )
        if "value-regex" in spec and not ("env" in spec or "call" in spec):
            raise CheckFileError(f"{where}.value-regex: needs env or call")
        if not any(k in spec for k in _FORMS):
            raise CheckFileError(f"{where}: needs one of {', '.join(_FORMS)}")
        if spec.get("scope", "any") not in ("module", "function", "any"):
            raise CheckFileError(f"{where}.scope: must be module, function or any")
        for key, needs in (("values", "set"), ("positional", "keywords"),
                           ("caught-only-by", "import"), ("not-import", "import"), ("not-argument-of", "reference"),
                           ("not-in-tables", "reference"), ("not-named", "reference")):
            if key in spec and needs not in spec:
                raise CheckFileError(f"{where}.{key}: needs {needs}")
        if any(k in spec for k in ("keywords", "within", "caught-by")) and not any(
                k in spec for k in ("call", "method", "condition-method", "condition-call")):
            raise CheckFileError(f"{where}: keywords, within and caught-by need call or method")
        if "within-callees" in spec and "within" not in spec:
            raise CheckFileError(f"{where}.within-callees: needs within")
        self.modules = tuple(spec.get("import", ()))
        self.left_out_modules = tuple(spec.get("not-import", ()))
        self.scope = spec.get("scope", "any")
        self.caught_by = tuple(spec.get("caught-by", ()))
        # Distributions that install the imported module: where the file's project declares one
        # as a dependency, the import succeeds on any machine it is installed on.
        self.installed_by = list(spec.get("installed-by", ()))
        self.caught_only_by = frozenset(spec.get("caught-only-by", ()))
        self.calls = frozenset(spec.get("call", ()))
        # The last part of each wanted call, and of each `within` context: a call written as
        # `x.attr(...)` can only have a wanted qualified name when `attr` is one of these, so
        # most calls of a module are passed over without resolving their names.
        self.call_tails = frozenset(name.rsplit(".", 1)[-1] for name in self.calls)
        self.methods = frozenset(spec.get("method", ()))
        self.keywords = {k: tuple(v) for k, v in spec.get("keywords", {}).items()}
        for key, values in self.keywords.items():
            if not isinstance(values, tuple) or not values:
                raise CheckFileError(f"{where}.keywords.{key}: must be a list of literal values")
        self.positional = tuple(spec.get("positional", ()))
        self.within = frozenset(spec.get("within", ()))
        self.within_callees = bool(spec.get("within-callees", False))
        self.condition_methods = frozenset(spec.get("condition-method", ()))
        self.condition_calls = frozenset(spec.get("condition-call", ()))
        self.condition_call_tails = frozenset(name.rsplit(".", 1)[-1] for name in self.condition_calls)
        self.within_tails = frozenset(name.rsplit(".", 1)[-1] for name in self.within)
        self.settings = frozenset(spec.get("set", ()))
        self.setting_values = tuple(spec["values"]) if "values" in spec else None
        self.env = frozenset(spec.get("env", ()))
        try:
            self.value_regex = re.compile(spec["value-regex"]) if "value-regex" in spec else None
        except re.error as exc:
            raise CheckFileError(f"{where}.value-regex: {exc}") from exc
        self.references = frozenset(spec.get("reference", ()))
        self.reference_tails = frozenset(name.rsplit(".", 1)[-1] for name in self.references)
        not_argument_of = spec.get("not-argument-of", ())
        self.not_argument_of_calls = frozenset(n for n in not_argument_of if not n.startswith("."))
        self.not_argument_of_methods = frozenset(n[1:] for n in not_argument_of if n.startswith("."))
        self.not_in_tables = bool(spec.get("not-in-tables", False))
        try:
            self.not_named = re.compile(spec["not-named"]) if "not-named" in spec else None
            self.gate_named = re.compile(spec["gate-named"]) if "gate-named" in spec else None
        except re.error as exc:
            raise CheckFileError(f"{where}: {exc}") from exc

    def find(self, source) -> Iterator[Match]:
        index = source.python_index
        found = []
        if self.modules:
            found.append(self._imports(source, index))
        if self.calls or self.methods or self.condition_methods or self.condition_calls:
            found.append(self._calls(source, index))
        if self.settings:
            found.append(self._settings(source, index))
        if self.env:
            found.append(self._env(source, index))
        if self.references:
            found.append(self._references(source, index))
        for matches in found:
            for match in matches:
                if match.gate is None and self.gate_named is not None and match.node is not None:
                    named = self._named_for_api(source, index, match.node)
                    if named is not None:
                        match = replace(match, gate=named)
                yield match

    def _named_for_api(self, source, index, node: ast.AST) -> str | None:
        """Why the hit lies in code named for the API it uses (`gate-named`), or None."""
        parent = index.parents.get(id(node))
        while parent is not None:
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and self.gate_named.search(parent.name):
                kind = "class" if isinstance(parent, ast.ClassDef) else "function"
                return f"in {kind} `{parent.name}`, code named for this API (line {parent.lineno})"
            parent = index.parents.get(id(parent))
        path = getattr(source, "path", None)
        stem = os.path.splitext(os.path.basename(str(path)))[0] if path else ""
        if stem and self.gate_named.search(stem):
            return f"in a module named for this API ({stem})"
        return None

    # --- positions ------------------------------------------------------------------------

    def _offsets(self, source, first: ast.AST, last: ast.AST | None = None) -> tuple[int, int]:
        last = last or first
        start = source.offset(first.lineno, source.byte_col_to_char(first.lineno, first.col_offset))
        end = source.offset(last.end_lineno, source.byte_col_to_char(last.end_lineno, last.end_col_offset))
        return start, end

    def _capture(self, source, node: ast.AST) -> Capture:
        start, end = self._offsets(source, node)
        return Capture(source.text[start:end], start, end)

    # --- imports --------------------------------------------------------------------------

    def _wanted_module(self, name: str | None) -> bool:
        return bool(name) and any(name == m or name.startswith(m + ".") for m in self.modules) and not self._left_out(name)

    def _left_out(self, name: str) -> bool:
        return any(name == m or name.startswith(m + ".") for m in self.left_out_modules)

    def _imports(self, source, index) -> Iterator[Match]:
        found: list[tuple[ast.AST, str]] = []
        for node in index.imports:
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names if self._wanted_module(a.name)]
            elif node.level == 0 and self._wanted_module(node.module) and not any(
                    self._left_out(f"{node.module}.{a.name}") for a in node.names):
                names = [node.module]
            else:
                # `from flash_attn.ops import layer_norm` imports the module flash_attn.ops.layer_norm.
                names = [f"{node.module}.{a.name}" for a in node.names
                         if node.level == 0 and node.module and self._wanted_module(f"{node.module}.{a.name}")]
            if names:
                found.append((node, names[0]))
        for call in index.calls:
            # importlib.import_module("flash_attn") and __import__("flash_attn") import too.
            if call.args and may_name(call.func, _IMPORT_TAILS) and index.qualified_name(call.func) in _IMPORT_CALLS:
                first = call.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str) and self._wanted_module(first.value):
                    found.append((call, first.value))
        from rocmlint.python.gates import own_module

        for node, name in found:
            if not self._in_scope(index, node):
                continue
            if own_module(source.path, name.split(".")[0]):
                start, end = self._offsets(source, node)
                yield Match(start, end, gate=f"`{name.split('.')[0]}` is this project's own module", captures={"MODULE": Capture(name, start, end)}, node=node)
                continue
            if self.caught_only_by:
                handler_try = self._try_catching_only(index, node)
                if handler_try is None:
                    continue
                gate = self._gate(index, node)
            else:
                gate = self._gate(index, node, import_guard=True)
            if gate is None and self.installed_by:
                from rocmlint.python.gates import declared_dependency

                declared = declared_dependency(source.path, self.installed_by)
                if declared is not None:
                    gate = f"the project declares {declared} as a dependency: the import succeeds wherever it is installed"
            start, end = self._offsets(source, node)
            yield Match(start, end, gate=gate, captures={"MODULE": Capture(name, start, end)}, node=node)

    def _try_catching_only(self, index, node: ast.AST) -> ast.Try | None:
        """The innermost `try` whose body holds `node`, when each of its handlers catches
        only exception types listed in `caught-only-by`."""
        child, parent = node, index.parents.get(id(node))
        while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if isinstance(parent, ast.Try) and any(child is s for s in parent.body) and parent.handlers:
                caught = [name for h in parent.handlers for name in _handler_names(h)]
                if caught and all(name is not None and name in self.caught_only_by for name in caught):
                    return parent
                return None
            child, parent = parent, index.parents.get(id(parent))
        return None

    # --- calls ----------------------------------------------------------------------------

    def _callee_matches(self, index, func: ast.AST) -> bool:
        if self.calls and may_name(func, self.call_tails) and index.qualified_name(func) in self.calls:
            return True
        return bool(self.methods) and isinstance(func, ast.Attribute) and func.attr in self.methods

    def _condition_matches(self, index, call: ast.Call) -> bool:
        """A listed condition call or method whose result is read as a truth value."""
        func = call.func
        if not ((self.condition_methods and isinstance(func, ast.Attribute) and func.attr in self.condition_methods)
                or (self.condition_calls and may_name(func, self.condition_call_tails)
                    and index.qualified_name(func) in self.condition_calls)):
            return False
        child, parent = call, index.parents.get(id(call))
        while isinstance(parent, ast.BoolOp) or (isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)):
            child, parent = parent, index.parents.get(id(parent))
        return isinstance(parent, (ast.If, ast.While, ast.Assert, ast.IfExp)) and child is parent.test

    def _calls(self, source, index) -> Iterator[Match]:
        if self.within and not any(self._context_call(index, w) is not None for w in index.withs):
            return  # no `with` of a wanted context in the module: no call can be inside one
        callees = self._called_within(index) if self.within and self.within_callees else {}
        for call in index.calls:
            func, offset = call.func, 0
            if not self._callee_matches(index, func) and not self._condition_matches(index, call):
                # functools.partial(torch.compile, mode=...) configures the same call.
                if not (call.args and may_name(func, _PARTIAL_TAIL) and index.qualified_name(func) == "functools.partial"
                        and self._callee_matches(index, call.args[0])):
                    continue
                func, offset = call.args[0], 1
            if not self._in_scope(index, call):
                continue
            captures = {"CALLEE": self._capture(source, func)}
            if self.within:
                context = self._inside(index, call)
                if context is not None:
                    where = f"inside `with {self._capture(source, context.func).text}(...)` capture"
                else:
                    function = index.enclosing(call, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                    known = callees.get(id(function)) if function is not None else None
                    if known is None:
                        continue
                    context, site = known
                    where = (f"in `{function.name}()`, which is called inside `with "
                             f"{self._capture(source, context.func).text}(...)` capture (line {site.lineno})")
                captures["WITHIN"] = self._capture(source, context.func)
                captures["WHERE"] = Capture(where, captures["WITHIN"].start, captures["WITHIN"].end)
            matched, value_gate = self._keywords_match(source, index, call, offset, captures)
            if not matched:
                continue
            if self.value_regex is not None:
                text_gate = self._first_argument_matches(source, index, call, offset, captures)
                if text_gate is False:
                    continue
                value_gate = value_gate or text_gate
            start, end = self._offsets(source, call)
            gate = self._gate(index, call) or value_gate or (self._caught(index, call) if self.caught_by else None)
            yield Match(start, end, gate=gate, captures=captures, node=call)

    def _gate(self, index, node: ast.AST, **options) -> str | None:
        return index.gate(node, by_module_name=self.by_module_name, **options)

    def _first_argument_matches(self, source, index, call: ast.Call, offset: int, captures: dict):
        """With `value-regex` on a call: False when no value of the first argument matches,
        else the gate of the value found (None when one is taken on every stack); named
        groups become captures, as for `env`."""
        if len(call.args) <= offset:
            return False
        hit = None
        for value in index.values(call.args[offset]):
            if isinstance(value.literal, str):
                found = self.value_regex.search(value.literal)
                if found is not None and (hit is None or (hit[0].gate is not None and value.gate is None)):
                    hit = (value, found)
        if hit is None:
            return False
        value, found = hit
        captures["VALUE"] = self._capture(source, value.node)
        for group, text in found.groupdict().items():
            if text is not None:
                captures[group.upper()] = Capture(text, captures["VALUE"].start, captures["VALUE"].end)
        return value.gate

    def _in_scope(self, index, node: ast.AST) -> bool:
        if self.scope == "any":
            return True
        return index.at_module_level(node) == (self.scope == "module")

    def _catches(self, names: list[str | None]) -> str | None:
        for name in names:
            if name is None:
                return "everything"
            if any(name == c or name.startswith(c + "_") for c in self.caught_by):
                return name
        return None

    def _caught(self, index, node: ast.AST) -> str | None:
        """Why `node` is inside a guard that catches one of `caught-by`, or None."""
        child, parent = node, index.parents.get(id(node))
        while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if isinstance(parent, ast.Try) and any(child is s for s in parent.body):
                for handler in parent.handlers:
                    caught = self._catches(_handler_names(handler))
                    if caught:
                        return f"inside `try:` that catches {caught} (line {parent.lineno})"
            elif isinstance(parent, (ast.With, ast.AsyncWith)):
                for item in parent.items:
                    context = item.context_expr
                    if isinstance(context, ast.Call) and (index.qualified_name(context.func) or "").endswith("suppress"):
                        caught = self._catches([_name_of(a) for a in context.args])
                        if caught:
                            return f"inside `with suppress({caught})` (line {parent.lineno})"
            child, parent = parent, index.parents.get(id(parent))
        return None

    def _inside(self, index, call: ast.Call) -> ast.Call | None:
        """The `with <within>(...)` call whose body holds `call`, if any (same function)."""
        child, parent = call, index.parents.get(id(call))
        while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if isinstance(parent, (ast.With, ast.AsyncWith)) and any(child is s for s in parent.body):
                context = self._context_call(index, parent)
                if context is not None:
                    return context
            child, parent = parent, index.parents.get(id(parent))
        return None

    def _called_within(self, index) -> dict[int, tuple[ast.Call, ast.Call]]:
        """id(function) -> (the `with` context call, the call site) for each function that the
        body of a `within` context calls by name, one level deep: a function of this module or a
        nested one in scope (`run_once()`), or a method of the class around the `with`
        (`self.forward_step()`)."""
        found: dict[int, tuple[ast.Call, ast.Call]] = {}
        for statement in index.withs:
            context = self._context_call(index, statement)
            if context is None:
                continue
            owner = index.enclosing(statement, (ast.ClassDef,))
            methods = {n.name: n for n in owner.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))} if owner else {}
            for body_statement in statement.body:
                for node in ast.walk(body_statement):
                    if not isinstance(node, ast.Call):
                        continue
                    function = None
                    if isinstance(node.func, ast.Name):
                        function = index.local_function(node.func.id, node)
                    elif (isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
                          and node.func.value.id == "self"):
                        function = methods.get(node.func.attr)
                    if function is not None and id(function) not in found:
                        found[id(function)] = (context, node)
        return found

    def _context_call(self, index, statement: ast.With | ast.AsyncWith) -> ast.Call | None:
        """The first `with` item of `statement` that calls one of `within`, if any."""
        for item in statement.items:
            context = item.context_expr
            if (isinstance(context, ast.Call) and may_name(context.func, self.within_tails)
                    and index.qualified_name(context.func) in self.within):
                return context
        return None

    def _keywords_match(self, source, index, call: ast.Call, offset: int, captures: dict) -> tuple[bool, str | None]:
        """(whether every listed argument can take a listed value, and the gate of a value
        that is taken only on one GPU stack when no other was found)."""
        gate = None
        for name, wanted in self.keywords.items():
            candidates = self._argument_values(index, call, name, offset)
            hits = [(value, arg) for value, arg in candidates if value.literal is not UNKNOWN and _one_of(value.literal, wanted)]
            if not hits:
                return False, None
            ungated = [(v, a) for v, a in hits if v.gate is None]
            value = (ungated or hits)[0][0]
            if not ungated and gate is None:
                gate = value.gate
            captures[name.upper()] = self._capture(source, value.node)
            direct = [(v, a) for v, a in candidates if a is not None]
            if direct and all(v.literal is not UNKNOWN and _one_of(v.literal, wanted) and v.gate is None for v, _ in direct):
                captures[f"{name.upper()}_ARG"] = self._capture(source, direct[0][1])
        return True, gate

    def _argument_values(self, index, call: ast.Call, name: str, offset: int) -> list[tuple]:
        """(Value, the argument node at the call or None) for each value the argument `name`
        can take at this call."""
        found: list[tuple] = []
        for keyword in call.keywords:
            if keyword.arg == name:
                found += [(v, keyword.value) for v in index.values(keyword.value)]
            elif keyword.arg is None:
                for key, value, _, gate in index.dict_entries(keyword.value):
                    if key == name:
                        found += [(v if v.gate or not gate else _with_gate(v, gate), None) for v in index.values(value)]
        if name in self.positional:
            position = self.positional.index(name) + offset
            leading = call.args[: position + 1]
            if len(call.args) > position and not any(isinstance(a, ast.Starred) for a in leading):
                found += [(v, call.args[position]) for v in index.values(call.args[position])]
        return found

    # --- settings and environment variables -----------------------------------------------

    def _settings(self, source, index) -> Iterator[Match]:
        for write in index.setting_writes():
            if write.name not in self.settings or write.value is None:
                continue
            values = index.values(write.value)
            if self.setting_values is not None:
                values = [v for v in values if v.literal is not UNKNOWN and _one_of(v.literal, self.setting_values)]
                if not values:
                    continue
            value = next((v for v in values if v.gate is None), values[0])
            gate = write.gate or self._gate(index, write.anchor) or value.gate
            start, end = self._offsets(source, write.first, write.last)
            captures = {"SETTING": Capture(write.name, start, end), "VALUE": self._capture(source, value.node)}
            yield Match(start, end, gate=gate, captures=captures, node=write.anchor)

    def _env(self, source, index) -> Iterator[Match]:
        for write in index.env_writes():
            if write.name not in self.env:
                continue
            start, end = self._offsets(source, write.first, write.last)
            captures = {"VAR": Capture(write.name, start, end)}
            gate = self._gate(index, write.anchor)
            if self.value_regex is not None:
                if write.value is None:
                    continue
                hit = None
                for value in index.values(write.value):
                    if isinstance(value.literal, str):
                        found = self.value_regex.search(value.literal)
                        if found is not None and (hit is None or (hit[0].gate is not None and value.gate is None)):
                            hit = (value, found)
                if hit is None:
                    continue
                value, found = hit
                gate = gate or value.gate
                captures["VALUE"] = self._capture(source, value.node)
                node_start, node_end = captures["VALUE"].start, captures["VALUE"].end
                for group, text in found.groupdict().items():
                    if text is not None:
                        captures[group.upper()] = Capture(text, node_start, node_end)
            elif write.value is not None:
                captures["VALUE"] = self._capture(source, write.value)
            yield Match(start, end, gate=gate, captures=captures, node=write.anchor)

    # --- names ----------------------------------------------------------------------------

    def _references(self, source, index) -> Iterator[Match]:
        candidates: list[ast.AST] = [a for a in index.attributes if isinstance(a.ctx, ast.Load)]
        if any(q in self.references for q in index.aliases.values()):
            candidates += [n for n in ast.walk(index.tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
        for node in candidates:
            if not may_name(node, self.reference_tails):
                continue
            name = index.qualified_name(node)
            if name not in self.references:
                continue
            parent = index.parents.get(id(node))
            if isinstance(parent, ast.Attribute) or _only_compared(index, node) or self._use_left_out(source, index, node):
                continue
            start, end = self._offsets(source, node)
            yield Match(start, end, gate=self._gate(index, node), captures={"NAME": Capture(name, start, end)}, node=node)

    def _use_left_out(self, source, index, node: ast.AST) -> bool:
        """The uses the check file says are not findings: arguments of named calls, members of
        tables, and uses given to or lying in something whose name matches `not-named`."""
        parent = index.parents.get(id(node))
        while isinstance(parent, ast.IfExp) and node is not parent.test:
            node, parent = parent, index.parents.get(id(parent))  # `t.view(a if c else b)`
        if isinstance(parent, ast.Call) and node in parent.args:
            callee = parent.func
            if isinstance(callee, ast.Attribute) and callee.attr in self.not_argument_of_methods:
                return True
            if self.not_argument_of_calls and index.qualified_name(callee) in self.not_argument_of_calls:
                return True
        if self.not_in_tables and (isinstance(parent, (ast.List, ast.Tuple, ast.Set))
                                   or isinstance(parent, ast.Dict) and any(node is v for v in parent.values)):
            return True
        if self.not_named is not None:
            return any(self.not_named.search(name) for name in _names_around(source, index, node))
        return False


def _one_of(literal: object, wanted: tuple) -> bool:
    """Strings match strings; booleans and numbers match by value (`1` enables as `True` does),
    but the string "1" never matches `true`."""
    return any(isinstance(literal, str) == isinstance(w, str) and literal == w for w in wanted)


def _with_gate(value, gate: str):
    from rocmlint.python.index import Value

    return Value(value.node, value.literal, gate)


def _handler_names(handler: ast.ExceptHandler) -> list[str | None]:
    """The exception names an `except` clause catches (None for a bare `except:` or one
    that cannot be named)."""
    kind = handler.type
    if kind is None:
        return [None]
    elements = kind.elts if isinstance(kind, ast.Tuple) else [kind]
    return [_name_of(element) for element in elements]


def _name_of(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _names_around(source, index, node: ast.AST) -> Iterator[str]:
    """The names a value is given to or lies in: the keyword it is passed as, the function it
    is passed to (`check_dtype(t, x)`), the target it is assigned to (through a call or cast that
    wraps it: `self.w_scale = param(..., dtype=x)`), the strings the tests of enclosing `if`s
    compare with (`if fmt == "mxfp8":`), the enclosing functions and classes, and the file's
    path below its project (folder names and stem)."""
    child, parent = node, index.parents.get(id(node))
    while parent is not None and not isinstance(parent, ast.stmt):
        if isinstance(parent, ast.keyword) and parent.arg:
            yield parent.arg
        elif isinstance(parent, ast.Call) and child is not parent.func:
            callee = _name_of(parent.func)
            if callee:
                yield callee
        child, parent = parent, index.parents.get(id(parent))
    if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.Name):
                    yield part.id
                elif isinstance(part, ast.Attribute):
                    yield part.attr
    child = parent
    while parent is not None:
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield parent.name
        elif isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test:
            for part in ast.walk(parent.test):
                if isinstance(part, ast.Constant) and isinstance(part.value, str) and len(part.value) < 64:
                    yield part.value
        child, parent = parent, index.parents.get(id(parent))
    path = getattr(source, "path", None)
    if path:
        yield from _path_names(str(path))


def _path_names(path: str) -> Iterator[str]:
    """The file's stem and the nearest three folders below where its project starts
    (`quantization/mxfp6/`); never folders above it (a checkout in `/ci/checkout/`)."""
    from rocmlint.files.project_start import folders_in_project

    yield os.path.splitext(os.path.basename(path))[0]
    below = folders_in_project(path)
    if below:
        yield from below.split("/")[-3:]


def _only_compared(index, node: ast.AST) -> bool:
    """`dtype == torch.float8_e4m3fn`, `dtype in (torch.float8_e4m3fn, ...)`, `{... : x}[dtype]`
    keys: uses that ask which dtype something is rather than choosing one."""
    child, parent = node, index.parents.get(id(node))
    while isinstance(parent, (ast.Tuple, ast.List, ast.Set)):
        child, parent = parent, index.parents.get(id(parent))
    if isinstance(parent, ast.Compare):
        return True
    if isinstance(parent, ast.Dict) and any(child is k for k in parent.keys):
        return True
    return False
