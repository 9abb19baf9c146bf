"""Facts about one Python module that every Python check shares, computed once per file.

- parents: child -> parent links, for gate checks and scope questions;
- aliases: local name -> qualified name, from every import in the module, so that
  `import torch._inductor.config as ic` makes `ic.triton.cudagraphs` read as
  `torch._inductor.config.triton.cudagraphs`, and `from torch import compile as tc` makes
  `tc(...)` a call of `torch.compile`;
- scopes and bindings: which names each function, class and the module bind, so that a name
  can be followed to what it was assigned (`values`), and a fix knows whether a name it
  writes is bound where it writes it (`module_reference`);
- writes: settings given a value (`setting_writes`: `torch.backends.cudnn.benchmark = True`,
  `config.patch({...})`, `torch.compile(options={...})`) and environment variables written
  (`env_writes`: `os.environ[...] = ...`, `setdefault`, `update`, `putenv`, dict literals).

Data flow is deliberately simple: within one module, a name is followed to every value it is
assigned in its scope (flow-insensitive), to a local function's `return` values, to a
parameter's default and `pytest.mark.parametrize` values, to the elements of a literal list
a `for` loop walks, to what a method of the same class returns (`self._compile_mode()`), to
the default of an environment variable read with one
(`os.environ.get("MODE", "reduce-overhead")` takes the default or an UNKNOWN value), through
`x if c else y` and `a or b`, a few levels deep; a dict to the dicts a local helper returns. What cannot be followed is an UNKNOWN value, never a guess.
The scanner never imports or executes the code: everything here comes from the `ast` tree.
"""

from __future__ import annotations

import ast
import os
from collections import deque

from rocmlint.python.imports import alias_map
from rocmlint.records import record

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Module)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_MAX_DEPTH = 6
# Calls that take inductor settings as a dict, and the keyword that holds it.
_INDUCTOR_OPTIONS = {
    "torch.compile": "options",
    "torch._inductor.compile": "options",
    "torch._inductor.compile_fx.compile_fx": "config_patches",
    "torch._inductor.compile_fx.compile_fx_inner": "config_patches",
    "torch._inductor.compile_fx": "config_patches",
}
# Reads of an environment variable with a default: the default is one value they take.
_ENVIRONMENT_READS = frozenset({"os.environ.get", "os.getenv", "os.environ.setdefault"})
_ENVIRONMENT_READ_TAILS = frozenset(name.rsplit(".", 1)[-1] for name in _ENVIRONMENT_READS)


def may_name(func: ast.AST, tails: frozenset[str] | tuple[str, ...]) -> bool:
    """False when `func` cannot have a qualified name ending in one of `tails`: an attribute
    (`a.b.attr`) keeps its own last part. A bare name may be an alias of anything."""
    return not isinstance(func, ast.Attribute) or func.attr in tails


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()


@record
class Value:
    """One value an expression can take: the node that writes it, the constant (or UNKNOWN),
    and why it is only taken on one GPU stack (a gate reason; None: on every stack)."""

    node: ast.AST
    literal: object
    gate: str | None = None


@record
class Write:
    """A setting or environment variable given a value. `first`..`last` is what to report."""

    name: str
    value: ast.AST | None
    first: ast.AST
    last: ast.AST
    anchor: ast.AST  # the node whose gates apply (the statement or call that writes)
    gate: str | None = None  # a gate found on the way (the dict was assigned under one)


@record
class Insertion:
    """Text to insert at a code-point-free position: before the start of `line` (1-based)
    when `at_line_end` is False, else at the end of that line."""

    line: int
    text: str
    at_line_end: bool


@record
class ModuleReference:
    """How a fix names a module at one place: `text` (the local name), the insertions that
    make it bound there, and whether that keeps behaviour identical (`safe`)."""

    text: str
    insertions: tuple[Insertion, ...]
    safe: bool


# Nodes the walk below need not enter: a name or a constant holds no other node worth a
# parent (only its shared `ctx`), and the context and operator nodes are singletons that
# `ast` shares between all their uses, so that no one parent of theirs exists.
_LEAVES = frozenset({ast.Name, ast.Constant})
_SHARED_LEAVES = frozenset(
    kind for base in (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop) for kind in base.__subclasses__()
)


class PythonIndex:
    def __init__(self, tree: ast.AST, path: str | None = None, lines: list[str] | None = None):
        self.tree = tree
        self.path = path
        self.lines = lines or []
        self.parents: dict[int, ast.AST] = {}
        self.calls: list[ast.Call] = []
        self.imports: list[ast.Import | ast.ImportFrom] = []
        self.assignments: list[ast.stmt] = []
        self.withs: list[ast.With | ast.AsyncWith] = []
        self.compares: list[ast.Compare] = []
        self.attributes: list[ast.Attribute] = []
        self.dicts: list[ast.Dict] = []
        self.branches: list[ast.If | ast.IfExp] = []
        # One breadth-first pass in ast.walk's order (children in field order), recording
        # each node's parent as its children are listed: ast.walk followed by
        # ast.iter_child_nodes listed every node's children twice.
        kinds = {
            ast.Call: self.calls,
            ast.Import: self.imports,
            ast.ImportFrom: self.imports,
            ast.Assign: self.assignments,
            ast.AnnAssign: self.assignments,
            ast.AugAssign: self.assignments,
            ast.With: self.withs,
            ast.AsyncWith: self.withs,
            ast.Compare: self.compares,
            ast.Attribute: self.attributes,
            ast.Dict: self.dicts,
            ast.If: self.branches,
            ast.IfExp: self.branches,
        }
        parents = self.parents
        node_type = ast.AST
        pending = deque([tree])
        while pending:
            parent = pending.popleft()
            for name in parent._fields:
                try:
                    value = getattr(parent, name)
                except AttributeError:
                    continue
                if isinstance(value, node_type):
                    kind = type(value)
                    if kind in _SHARED_LEAVES:
                        continue
                    parents[id(value)] = parent
                    if kind not in _LEAVES:
                        pending.append(value)
                elif isinstance(value, list):
                    for item in value:
                        if isinstance(item, node_type):
                            parents[id(item)] = parent
                            if type(item) not in _LEAVES:
                                pending.append(item)
            listed = kinds.get(type(parent))
            if listed is not None:
                listed.append(parent)
        self.aliases = alias_map(self.imports)
        self.star_import = any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names) for n in self.imports)
        self._predicates = None
        self._block_facts = None
        self._bound_names: set[str] | None = None
        self._f_strings: list[tuple[int, int]] | None = None
        self._line_starts: list[int] | None = None
        self._module_gate: str | None = None
        self._bindings: dict[int, dict[str, list[ast.AST]]] = {}
        self._settings: list[Write] | None = None
        self._envs: list[Write] | None = None
        self._caller_gates: dict[tuple[int, bool], str | None] = {}
        self._names: dict[str, list[ast.Name]] | None = None

    @property
    def predicates(self):
        """The module's platform predicates (rocmlint.python.gates.PlatformPredicates), found lazily:
        only a file with a hit to gate needs them."""
        if self._predicates is None:
            from rocmlint.python.gates import PlatformPredicates

            self._predicates = PlatformPredicates.of_module(self.tree, self.path, self.aliases)
        return self._predicates

    def gate(self, node: ast.AST, *, import_guard: bool = False, by_module_name: bool = True) -> str | None:
        """Why a node is already gated for one GPU stack (rocmlint.python.gates.python_gate, or the
        module is for one stack by its name, unless `by_module_name` is False), or None."""
        from rocmlint.python.gates import python_gate

        if self._module_gate is None:
            from rocmlint.python.gates import python_module_gate

            self._module_gate = python_module_gate(self.path) or ""
        if self._module_gate and by_module_name:
            return self._module_gate
        if self._block_facts is None:
            from rocmlint.python.gates import BlockFacts

            self._block_facts = BlockFacts()
        gate = python_gate(node, self.parents, import_guard=import_guard, predicates=self.predicates, facts=self._block_facts)
        return gate if gate is not None else self._callers_gate(node, by_module_name)

    def _callers_gate(self, node: ast.AST, by_module_name: bool = True) -> str | None:
        """Why the module-level function around `node` runs only in code for one GPU stack:
        every call of it in this file is gated, and nothing outside the file calls it (a
        private `_name`, or any function of a setup.py, which nothing imports). vLLM's setup.py
        calls its nvcc probe only under `if _is_cuda():`."""
        function, child = None, node
        parent = self.parents.get(id(child))
        while parent is not None:
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
                function = parent
            elif isinstance(parent, ast.ClassDef):
                return None  # a method: called through its objects, which this does not follow
            parent = self.parents.get(id(parent))
        if function is None or not isinstance(self.parents.get(id(function)), ast.Module):
            return None
        key = (id(function), by_module_name)
        if key in self._caller_gates:
            return self._caller_gates[key]
        self._caller_gates[key] = None  # a function that calls itself decides nothing
        private = function.name.startswith("_") and not function.name.startswith("__")
        script = self.path is not None and os.path.basename(self.path) == "setup.py"
        reason = None
        if private or script:
            uses = self._name_uses().get(function.name, [])
            calls = [n for n in uses if isinstance(self.parents.get(id(n)), ast.Call) and self.parents[id(n)].func is n]
            if calls and len(calls) == len(uses):
                gates = [self.gate(self.parents[id(n)], by_module_name=by_module_name) for n in calls]
                if all(gates):
                    first = min(calls, key=lambda n: n.lineno)
                    reason = (
                        f"every call of `{function.name}()` in this file is code for one GPU stack "
                        f"(line {first.lineno}: {gates[calls.index(first)]})"
                    )
        self._caller_gates[key] = reason
        return reason

    def _name_uses(self) -> dict[str, list[ast.Name]]:
        """Every `ast.Name` of the module by its name, in `ast.walk`'s order: one walk for all
        the functions whose callers are asked about."""
        if self._names is None:
            names: dict[str, list[ast.Name]] = {}
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Name):
                    names.setdefault(node.id, []).append(node)
            self._names = names
        return self._names

    def is_platform_test(self, test: ast.AST) -> bool:
        from rocmlint.python.gates import is_platform_test

        return is_platform_test(test, self.predicates)

    # --- names ----------------------------------------------------------------------------

    def qualified_name(self, node: ast.AST, _depth: int = 0) -> str | None:
        """`ic.triton.cudagraphs` -> `torch._inductor.config.triton.cudagraphs`.

        A name that no import binds is taken as written (code snippets often skip imports),
        unless the module binds it once to a dotted name (`cfg = torch._inductor.config`).
        """
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        head = self.aliases.get(node.id)
        if head is None:
            head = node.id
            if _depth < 3:
                bound = self.bindings(self.tree).get(node.id, [])
                if len(bound) == 1 and isinstance(bound[0], ast.Assign) and isinstance(bound[0].value, (ast.Attribute, ast.Name)):
                    target = self.qualified_name(bound[0].value, _depth + 1)
                    if target and "." in target:
                        head = target
        parts.append(head)
        return ".".join(reversed(parts))

    def local_name_of_module(self, module: str) -> str | None:
        """The local name that refers to `module` itself (`import torch as T` -> "T")."""
        for local, qualified in self.aliases.items():
            if qualified == module:
                return local
        return None

    def at_module_level(self, node: ast.AST) -> bool:
        """True when the node runs at import time: not inside a function or lambda body
        (class bodies, decorators and defaults run at import)."""
        return not any(isinstance(scope, _FUNCTIONS) for scope in self.scopes_of(node))

    def enclosing(self, node: ast.AST, kinds) -> ast.AST | None:
        parent = self.parents.get(id(node))
        while parent is not None and not isinstance(parent, kinds):
            parent = self.parents.get(id(parent))
        return parent

    def statement_of(self, node: ast.AST) -> ast.stmt | None:
        while node is not None and not isinstance(node, ast.stmt):
            node = self.parents.get(id(node))
        return node

    # --- scopes ---------------------------------------------------------------------------

    def scopes_of(self, node: ast.AST) -> list[ast.AST]:
        """The scopes a name used at `node` is looked up in, innermost first (Python's rules:
        a class body is seen only by code directly in it; decorators and defaults belong to
        the scope around the function)."""
        scopes: list[ast.AST] = []
        child, parent = node, self.parents.get(id(node))
        seen_function = False
        while parent is not None:
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if any(child is s for s in parent.body):
                    scopes.append(parent)
                    seen_function = True
            elif isinstance(parent, ast.Lambda):
                if child is parent.body:
                    scopes.append(parent)
                    seen_function = True
            elif isinstance(parent, ast.ClassDef):
                if any(child is s for s in parent.body) and not seen_function:
                    scopes.append(parent)
            elif isinstance(parent, ast.Module):
                scopes.append(parent)
            child, parent = parent, self.parents.get(id(parent))
        if not scopes or not isinstance(scopes[-1], ast.Module):
            scopes.append(self.tree)
        return scopes

    def bindings(self, scope: ast.AST) -> dict[str, list[ast.AST]]:
        """name -> the nodes that bind it directly in `scope` (assignments, parameters as
        `ast.arg`, imports, defs, loop and `with` targets, `global` declarations)."""
        known = self._bindings.get(id(scope))
        if known is not None:
            return known
        found: dict[str, list[ast.AST]] = {}

        def bind(name: str, node: ast.AST) -> None:
            found.setdefault(name, []).append(node)

        def targets(target: ast.AST, node: ast.AST) -> None:
            if isinstance(target, ast.Name):
                bind(target.id, node)
            elif isinstance(target, (ast.Tuple, ast.List)):
                for element in target.elts:
                    targets(element, node)
            elif isinstance(target, ast.Starred):
                targets(target.value, node)

        def visit(node: ast.AST) -> None:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bind(node.name, node)
                for expr in node.decorator_list:
                    visit(expr)
                if not isinstance(node, ast.ClassDef):
                    for default in [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]:
                        visit(default)
                return
            if isinstance(node, ast.Lambda):
                for default in node.args.defaults:
                    visit(default)
                return
            if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                return
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    targets(target, node)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                targets(node.target, node)
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                targets(node.target, node)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if item.optional_vars is not None:
                        targets(item.optional_vars, node)
            elif isinstance(node, ast.NamedExpr):
                targets(node.target, node)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    if alias.name != "*":
                        bind(alias.asname or alias.name.split(".")[0], node)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                bind(node.name, node)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                for name in node.names:
                    bind(name, node)
            for child in ast.iter_child_nodes(node):
                visit(child)

        if isinstance(scope, _FUNCTIONS):
            arguments = scope.args
            for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
                bind(arg.arg, arg)
            for arg in (arguments.vararg, arguments.kwarg):
                if arg is not None:
                    bind(arg.arg, arg)
            body = [scope.body] if isinstance(scope, ast.Lambda) else scope.body
        else:
            body = scope.body
        for statement in body:
            visit(statement)
        self._bindings[id(scope)] = found
        return found

    def binding_scope(self, name: str, at: ast.AST) -> ast.AST | None:
        """The scope whose binding of `name` is seen at `at`, or None (a builtin, a star
        import or an unbound name)."""
        for scope in self.scopes_of(at):
            bound = self.bindings(scope).get(name)
            if bound:
                if any(isinstance(b, ast.Global) for b in bound):
                    return self.tree
                return scope
        return None

    def bound_anywhere(self, name: str) -> bool:
        if self._bound_names is None:
            # Every name bound in any scope, computed once: asked for each fix of a file.
            self._bound_names = {n for node in ast.walk(self.tree) if isinstance(node, _SCOPES) for n in self.bindings(node)}
        return name in self._bound_names

    # --- values ---------------------------------------------------------------------------

    def values(self, expr: ast.AST, _depth: int = 0, _seen: frozenset = frozenset()) -> list[Value]:
        """Every value `expr` can take, followed through the module (see the module doc)."""
        if _depth > _MAX_DEPTH or id(expr) in _seen:
            return [Value(expr, UNKNOWN)]
        seen = _seen | {id(expr)}
        depth = _depth + 1
        if isinstance(expr, ast.Constant):
            return [Value(expr, expr.value)]
        if isinstance(expr, ast.JoinedStr):
            return [Value(expr, _template_text(expr))]
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Mod)):
            text = _template_text(expr)
            return [Value(expr, text if text is not None else UNKNOWN)]
        if isinstance(expr, ast.IfExp):
            reason = None
            if self.is_platform_test(expr.test):
                from rocmlint.python.gates import short_source

                reason = f"under `... if {short_source(expr.test, 60)} else ...` (line {expr.lineno})"
            found = self.values(expr.body, depth, seen) + self.values(expr.orelse, depth, seen)
            return [_gated(v, reason) for v in found]
        if isinstance(expr, ast.BoolOp):
            found: list[Value] = []
            for index, operand in enumerate(expr.values):
                reason = None
                earlier = [v for v in expr.values[:index] if self.is_platform_test(v)]
                if earlier:
                    from rocmlint.python.gates import short_source

                    reason = f"after `{short_source(earlier[0], 60)}` (line {expr.lineno})"
                found += [_gated(v, reason) for v in self.values(operand, depth, seen)]
            return found
        if isinstance(expr, ast.Name):
            return self._name_values(expr, depth, seen)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name):
            function = self._local_function(expr.func.id, expr)
            if function is not None:
                return self._return_values(function, depth, seen) or [Value(expr, UNKNOWN)]
        if (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and isinstance(expr.func.value, ast.Name)
                and expr.func.value.id == "self"):
            # `mode=self._get_compile_mode()`: a method of the class around the call.
            method = self._own_method(expr.func.attr, expr)
            if method is not None:
                return self._return_values(method, depth, seen) or [Value(expr, UNKNOWN)]
        if isinstance(expr, ast.Call) and len(expr.args) >= 2 and self._reads_environment(expr):
            # `os.environ.get("COMPILE_MODE", "reduce-overhead")`: the default where the
            # variable is unset, or whatever the environment holds.
            return self.values(expr.args[1], depth, seen) + [Value(expr, UNKNOWN)]
        return [Value(expr, UNKNOWN)]

    def _own_method(self, name: str, at: ast.AST) -> ast.AST | None:
        """The method `name` of the class whose method holds `at`, when the class defines it once."""
        owner = self.enclosing(at, (ast.ClassDef,))
        if owner is None:
            return None
        methods = [n for n in owner.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name]
        return methods[0] if len(methods) == 1 else None

    def _reads_environment(self, call: ast.Call) -> bool:
        """`os.environ.get(name, default)` or `os.getenv(name, default)`, through any alias."""
        return may_name(call.func, _ENVIRONMENT_READ_TAILS) and self.qualified_name(call.func) in _ENVIRONMENT_READS

    def _name_values(self, name: ast.Name, depth: int, seen: frozenset) -> list[Value]:
        scope = self.binding_scope(name.id, name)
        if scope is None:
            return [Value(name, UNKNOWN)]
        found: list[Value] = []
        bound = self.bindings(scope).get(name.id, [])
        if not bound:
            return [Value(name, UNKNOWN)]
        for binding in bound:
            gate = self.gate(binding) if isinstance(binding, ast.stmt) else None
            if isinstance(binding, (ast.Assign, ast.AnnAssign)) and binding.value is not None:
                value = _assigned_part(binding, name.id)
                if value is None:
                    found.append(Value(binding, UNKNOWN, gate))
                else:
                    found += [_gated(v, gate) for v in self.values(value, depth, seen)]
            elif isinstance(binding, ast.arg):
                found += self._parameter_values(scope, binding, depth, seen)
            elif (isinstance(binding, (ast.For, ast.AsyncFor)) and isinstance(binding.target, ast.Name)
                  and self._elements(binding.iter) is not None):
                for element in self._elements(binding.iter):
                    found += [_gated(v, gate) for v in self.values(element, depth, seen)]
            else:
                found.append(Value(binding, UNKNOWN, gate))
        return found

    def _elements(self, expr: ast.AST) -> list[ast.AST] | None:
        """The elements of a literal list, tuple or set, or of a name assigned only one."""
        if isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
            return list(expr.elts)
        if isinstance(expr, ast.Name):
            scope = self.binding_scope(expr.id, expr)
            bound = self.bindings(scope).get(expr.id, []) if scope is not None else []
            if len(bound) == 1 and isinstance(bound[0], ast.Assign) and isinstance(bound[0].value, (ast.List, ast.Tuple, ast.Set)):
                return list(bound[0].value.elts)
        return None

    def _parameter_values(self, function: ast.AST, arg: ast.arg, depth: int, seen: frozenset) -> list[Value]:
        """A parameter takes its `pytest.mark.parametrize` values when the test names it, else
        its default (if any) and whatever callers pass (UNKNOWN)."""
        found: list[Value] = []
        for decorator in getattr(function, "decorator_list", []):
            found += self._parametrized(decorator, arg.arg, depth, seen)
        if found:
            return found
        arguments = function.args
        positional = [*arguments.posonlyargs, *arguments.args]
        if arg in positional:
            offset = len(positional) - len(arguments.defaults)
            index = positional.index(arg)
            if index >= offset:
                found += self.values(arguments.defaults[index - offset], depth, seen)
        elif arg in arguments.kwonlyargs:
            default = arguments.kw_defaults[arguments.kwonlyargs.index(arg)]
            if default is not None:
                found += self.values(default, depth, seen)
        return found + [Value(arg, UNKNOWN)]

    def _parametrized(self, decorator: ast.AST, name: str, depth: int, seen: frozenset) -> list[Value]:
        if not (isinstance(decorator, ast.Call) and len(decorator.args) >= 2):
            return []
        qualified = self.qualified_name(decorator.func) or ""
        if not qualified.endswith("mark.parametrize"):
            return []
        names_node, cases = decorator.args[0], decorator.args[1]
        if isinstance(names_node, ast.Constant) and isinstance(names_node.value, str):
            names = [n.strip() for n in names_node.value.split(",")]
        elif isinstance(names_node, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) for e in names_node.elts):
            names = [str(e.value) for e in names_node.elts]
        else:
            return []
        if name not in names:
            return []
        position = names.index(name)
        if not isinstance(cases, (ast.List, ast.Tuple)):
            return [Value(cases, UNKNOWN)]
        found: list[Value] = []
        for case in cases.elts:
            if isinstance(case, ast.Call) and (self.qualified_name(case.func) or "").endswith(".param") and case.args:
                case = case.args[0] if len(names) == 1 else ast.Tuple(elts=list(case.args), ctx=ast.Load())
            if len(names) == 1:
                found += self.values(case, depth, seen)
            elif isinstance(case, (ast.Tuple, ast.List)) and len(case.elts) > position:
                found += self.values(case.elts[position], depth, seen)
            else:
                found.append(Value(case, UNKNOWN))
        return found

    def local_function(self, name: str, at: ast.AST) -> ast.AST | None:
        """The function definition a call of `name` at `at` runs: the only kind of binding the
        name has in the scope that binds it (the last `def` of it), else None."""
        return self._local_function(name, at)

    def _local_function(self, name: str, at: ast.AST) -> ast.AST | None:
        scope = self.binding_scope(name, at)
        if scope is None:
            return None
        bound = self.bindings(scope).get(name, [])
        functions = [b for b in bound if isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef))]
        return functions[-1] if functions and len(functions) == len(bound) else None

    def _return_values(self, function: ast.AST, depth: int, seen: frozenset) -> list[Value]:
        found: list[Value] = []
        for node in _own_nodes(function):
            if isinstance(node, ast.Return) and node.value is not None:
                gate = self.gate(node)
                found += [_gated(v, gate) for v in self.values(node.value, depth, seen)]
        return found

    def dict_entries(self, expr: ast.AST, _depth: int = 0) -> list[tuple[str, ast.AST, ast.AST, str | None]]:
        """(key, value, key node, gate) for each string key a dict expression can hold: a
        literal, `dict(k=v)`, `**other` inside them, or a name assigned one of those (and its
        `name["k"] = v` stores in the same scope)."""
        if _depth > _MAX_DEPTH:
            return []
        entries: list[tuple[str, ast.AST, ast.AST, str | None]] = []
        if isinstance(expr, ast.Dict):
            for key, value in zip(expr.keys, expr.values):
                if key is None:
                    entries += self.dict_entries(value, _depth + 1)
                elif isinstance(key, ast.Constant) and isinstance(key.value, str):
                    entries.append((key.value, value, key, None))
        elif isinstance(expr, ast.Call) and self.qualified_name(expr.func) == "dict":
            for arg in expr.args[:1]:
                entries += self.dict_entries(arg, _depth + 1)
            for keyword in expr.keywords:
                if keyword.arg is None:
                    entries += self.dict_entries(keyword.value, _depth + 1)
                else:
                    entries.append((keyword.arg, keyword.value, keyword, None))
        elif isinstance(expr, ast.IfExp):
            entries += self.dict_entries(expr.body, _depth + 1) + self.dict_entries(expr.orelse, _depth + 1)
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name):
            # `torch.compile(model, **compile_options())`: the dicts a local helper returns.
            function = self._local_function(expr.func.id, expr)
            if function is not None:
                for node in _own_nodes(function):
                    if isinstance(node, ast.Return) and node.value is not None:
                        gate = self.gate(node)
                        entries += [(k, v, n, g or gate) for k, v, n, g in self.dict_entries(node.value, _depth + 1)]
        elif isinstance(expr, ast.Name):
            scope = self.binding_scope(expr.id, expr)
            if scope is not None:
                for binding in self.bindings(scope).get(expr.id, []):
                    if isinstance(binding, (ast.Assign, ast.AnnAssign)) and binding.value is not None:
                        value = _assigned_part(binding, expr.id)
                        if value is not None:
                            gate = self.gate(binding)
                            entries += [(k, v, n, g or gate) for k, v, n, g in self.dict_entries(value, _depth + 1)]
                for node in _own_nodes(scope):
                    if isinstance(node, ast.Assign):
                        for target in node.targets:
                            if (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
                                    and target.value.id == expr.id and isinstance(target.slice, ast.Constant)
                                    and isinstance(target.slice.value, str)):
                                entries.append((target.slice.value, node.value, target, self.gate(node)))
        return entries

    # --- writes ---------------------------------------------------------------------------

    def setting_writes(self) -> list[Write]:
        """Settings given a value: `a.b.c = v` (any alias of `a.b`), `setattr(a.b, "c", v)`,
        `a.b.patch({"c": v})` / `patch("c", v)` / `patch(c=v)` (and `mock.patch.object(a.b,
        "c", v)`), and `torch.compile(options={"c": v})` (also inside a `**kwargs` dict) and
        `compile_fx(..., config_patches={"c": v})` for `torch._inductor.config.c`."""
        if self._settings is not None:
            return self._settings
        writes: list[Write] = []
        for statement in self.assignments:
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            value = statement.value
            for target in targets:
                if isinstance(target, ast.Attribute):
                    name = self.qualified_name(target)
                    if name:
                        writes.append(Write(name, value, target, value if value is not None else target, statement))
        for call in self.calls:
            callee = self.qualified_name(call.func) or ""
            if callee == "setattr" and len(call.args) == 3 and _is_str(call.args[1]):
                owner = self.qualified_name(call.args[0])
                if owner:
                    writes.append(Write(f"{owner}.{call.args[1].value}", call.args[2], call, call, call))
            elif callee.endswith("patch.object") and len(call.args) >= 3 and _is_str(call.args[1]):
                owner = self.qualified_name(call.args[0])
                if owner:
                    writes.append(Write(f"{owner}.{call.args[1].value}", call.args[2], call, call, call))
            elif isinstance(call.func, ast.Attribute) and call.func.attr == "patch":
                owner = self.qualified_name(call.func.value)
                if not owner or owner.endswith("mock"):
                    continue
                if len(call.args) >= 2 and _is_str(call.args[0]):
                    writes.append(Write(f"{owner}.{call.args[0].value}", call.args[1], call.args[0], call.args[1], call))
                elif call.args:
                    for key, value, key_node, gate in self.dict_entries(call.args[0]):
                        writes.append(Write(f"{owner}.{key}", value, key_node, value, call, gate))
                for keyword in call.keywords:
                    if keyword.arg is None:
                        for key, value, key_node, gate in self.dict_entries(keyword.value):
                            writes.append(Write(f"{owner}.{key}", value, key_node, value, call, gate))
                    else:
                        writes.append(Write(f"{owner}.{keyword.arg}", keyword.value, keyword, keyword, call))
            if callee == "functools.partial" and call.args:
                callee = self.qualified_name(call.args[0]) or ""
            option_keyword = _INDUCTOR_OPTIONS.get(callee)
            if option_keyword is not None:
                for keyword in call.keywords:
                    options: list[tuple[ast.AST, str | None]] = []
                    if keyword.arg == option_keyword:
                        options.append((keyword.value, None))
                    elif keyword.arg is None:
                        # `torch.compile(model, **{"options": {...}})`, a kwargs dict built apart
                        options += [(v, g) for k, v, _, g in self.dict_entries(keyword.value) if k == option_keyword]
                    for expr, outer_gate in options:
                        for key, value, key_node, gate in self.dict_entries(expr):
                            writes.append(Write(f"torch._inductor.config.{key}", value, key_node, value, call, gate or outer_gate))
        self._settings = writes
        return writes

    def env_writes(self) -> list[Write]:
        """Environment variables given a value: `os.environ["X"] = v` (any mapping stored with
        a string key), `.setdefault("X", v)`, `.update({...})` / `.update(X=v)`,
        `os.putenv("X", v)`, `monkeypatch.setenv("X", v)`, `dict(X=v)`, and dict literals that
        are environments (see `_is_environment`)."""
        if self._envs is not None:
            return self._envs
        writes: list[Write] = []
        for statement in self.assignments:
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                name = self._key_text(target.slice) if isinstance(target, ast.Subscript) else None
                if name is not None:
                    last = statement.value if statement.value is not None else target
                    writes.append(Write(name, statement.value, target, last, statement))
        for call in self.calls:
            func = call.func
            method = func.attr if isinstance(func, ast.Attribute) else None
            callee = self.qualified_name(func) or ""
            if method in ("setdefault", "setenv") or callee == "os.putenv":
                name = self._key_text(call.args[0]) if len(call.args) >= 2 else None
                if name is not None:
                    writes.append(Write(name, call.args[1], call, call, call))
            elif method == "update" or callee == "dict":
                for keyword in call.keywords:
                    if keyword.arg is not None:
                        writes.append(Write(keyword.arg, keyword.value, keyword, keyword, call))
        for mapping in self.dicts:
            if not self._is_environment(mapping):
                continue
            for key, value in zip(mapping.keys, mapping.values):
                if key is not None and _is_str(key):
                    writes.append(Write(key.value, value, key, value, mapping))
        self._envs = writes
        return writes

    def _key_text(self, node: ast.AST) -> str | None:
        """The string a key is: a literal, or a name every value of which is the same literal
        (`ALLOC_CONF = "PYTORCH_CUDA_ALLOC_CONF"; os.environ[ALLOC_CONF] = ...`)."""
        if _is_str(node):
            return node.value
        if isinstance(node, ast.Name):
            texts = {v.literal for v in self.values(node)}
            if len(texts) == 1:
                text = texts.pop()
                return text if isinstance(text, str) else None
        return None

    def _is_environment(self, mapping: ast.Dict) -> bool:
        """Is this dict literal an environment? It copies `os.environ` (`{**os.environ, ...}`),
        is passed as one (`env=`, `.update(...)`, `patch.dict(os.environ, ...)`), or is
        assigned to a name that says so (`env`, `worker_env`). Other dicts with such keys are
        data (test tables of settings), not writes."""
        if any(k is None and self.qualified_name(v) == "os.environ" for k, v in zip(mapping.keys, mapping.values)):
            return True
        parent = self.parents.get(id(mapping))
        if isinstance(parent, ast.keyword):
            return bool(parent.arg) and "env" in parent.arg.lower()
        if isinstance(parent, ast.Call):
            func = parent.func
            name = self.qualified_name(func) or ""
            return (isinstance(func, ast.Attribute) and func.attr == "update") or name.endswith("patch.dict")
        if isinstance(parent, (ast.Assign, ast.AnnAssign)):
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            return any(isinstance(t, ast.Name) and "env" in t.id.lower() for t in targets)
        return False

    # --- naming a module in a fix ---------------------------------------------------------

    def module_reference(self, module: str, at: ast.AST) -> ModuleReference | None:
        """How a rewrite at `at` can name `module` (`torch`) so that it is bound there.

        1. A local name already bound to the module in a scope `at` sees, by imports only
           (or `= None` in an `except` clause, the optional-import idiom): use it; safe.
        2. Else, when `at` is a call whose callee was imported from the module (`from torch
           import compile as tc`): add `import torch` right after that import statement, in
           the same scope: the module is already loaded there, so this is safe.
        3. Else: add `import torch` before the statement holding `at`: unsafe, since the
           module may not be imported there yet (or at all).
        None when neither can be done cleanly (the name is bound to something else, a star
        import may bind it, or the statement shares its line with others).
        """
        root = module.split(".")[0]
        for local, qualified in self.aliases.items():
            if qualified == module and not self._comprehension_binds(local, at) and self._bound_to_module(local, module, at):
                return ModuleReference(local, (), True)
        if root != module or self.star_import or self.bound_anywhere(root) or self._comprehension_binds(root, at):
            return None
        callee = at.func if isinstance(at, ast.Call) else None
        while isinstance(callee, ast.Attribute):
            callee = callee.value
        if isinstance(callee, ast.Name):
            scope = self.binding_scope(callee.id, at)
            bound = self.bindings(scope).get(callee.id, []) if scope is not None else []
            if len(bound) == 1 and isinstance(bound[0], (ast.Import, ast.ImportFrom)) and _imports_from(bound[0], module):
                statement = bound[0]
                if self._owns_its_lines(statement):
                    indent = _indent(self.lines[statement.lineno - 1])
                    return ModuleReference(root, (Insertion(statement.end_lineno, f"\n{indent}import {root}", True),), True)
        statement = self.statement_of(at)
        if statement is None:
            return None
        first_line = min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", []))])
        if isinstance(self.parents.get(id(statement)), ast.If) and self._is_elif(statement):
            return None
        line_text = self.lines[first_line - 1] if first_line - 1 < len(self.lines) else ""
        start_col = statement.col_offset if first_line == statement.lineno else None
        if start_col is not None and line_text[:start_col].strip():
            return None
        if start_col is None and not line_text.lstrip().startswith("@"):
            return None
        indent = _indent(line_text)
        return ModuleReference(root, (Insertion(first_line, f"{indent}import {root}\n", False),), False)

    @property
    def f_string_spans(self) -> list[tuple[int, int]]:
        """(start, end) code-point offsets of every f-string of the module."""
        if self._f_strings is None:
            spans = []
            for node in ast.walk(self.tree):
                if isinstance(node, ast.JoinedStr) and getattr(node, "end_lineno", None) is not None:
                    spans.append((self._offset(node.lineno, node.col_offset), self._offset(node.end_lineno, node.end_col_offset)))
            self._f_strings = spans
        return self._f_strings

    def _offset(self, line: int, byte_col: int) -> int:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        if not text.isascii():
            from rocmlint.findings import line_columns

            byte_col = line_columns(text).to_chars(byte_col)
        return self._line_start(line) + byte_col

    def _line_start(self, line: int) -> int:
        if self._line_starts is None:
            starts, offset = [], 0
            for text in self.lines:
                starts.append(offset)
                offset += len(text) + 1
            self._line_starts = starts
        return self._line_starts[line - 1] if 0 < line <= len(self._line_starts) else 0

    def _comprehension_binds(self, name: str, at: ast.AST) -> bool:
        """Is `name` a target of a comprehension around `at` (`[f(torch) for torch in xs]`)?
        A comprehension is a scope of its own, which `bindings` does not list."""
        node = self.parents.get(id(at))
        while node is not None and not isinstance(node, _SCOPES):
            if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                for generator in node.generators:
                    if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(generator.target)):
                        return True
            node = self.parents.get(id(node))
        return False

    def _bound_to_module(self, local: str, module: str, at: ast.AST) -> bool:
        scope = self.binding_scope(local, at)
        if scope is None:
            return False
        imports_module = False
        for binding in self.bindings(scope).get(local, []):
            if isinstance(binding, ast.Import):
                alias = next(a for a in binding.names if (a.asname or a.name.split(".")[0]) == local)
                if (alias.asname and alias.name != module) or (not alias.asname and alias.name.split(".")[0] != module):
                    return False
                imports_module = True
            elif isinstance(binding, ast.ImportFrom):
                alias = next(a for a in binding.names if (a.asname or a.name) == local)
                if f"{binding.module}.{alias.name}" != module:
                    return False
                imports_module = True
            elif (isinstance(binding, ast.Assign) and isinstance(binding.value, ast.Constant) and binding.value.value is None
                  and isinstance(self.enclosing(binding, (ast.ExceptHandler, ast.FunctionDef, ast.Module)), ast.ExceptHandler)):
                continue
            else:
                return False
        if not imports_module:
            return False
        if scope is self.tree and self.at_module_level(at):
            # Code that runs at import time sees only the imports above it.
            first = min(b.lineno for b in self.bindings(scope)[local] if isinstance(b, (ast.Import, ast.ImportFrom)))
            return first < getattr(at, "lineno", 0)
        if scope is not self.tree and isinstance(scope, _FUNCTIONS):
            first = min(b.lineno for b in self.bindings(scope)[local] if isinstance(b, (ast.Import, ast.ImportFrom)))
            return first < getattr(at, "lineno", 0)
        return True

    def _owns_its_lines(self, statement: ast.stmt) -> bool:
        """The statement starts its first line and nothing but a comment follows it."""
        first = self.lines[statement.lineno - 1] if statement.lineno - 1 < len(self.lines) else ""
        last = self.lines[statement.end_lineno - 1] if statement.end_lineno - 1 < len(self.lines) else ""
        if first[: _char_col(first, statement.col_offset)].strip():
            return False
        rest = last[_char_col(last, statement.end_col_offset):].strip()
        return not rest or rest.startswith("#")

    def _is_elif(self, statement: ast.stmt) -> bool:
        text = self.lines[statement.lineno - 1] if statement.lineno - 1 < len(self.lines) else ""
        return text[_char_col(text, statement.col_offset):].startswith("elif")


# --- helpers --------------------------------------------------------------------------------


def _gated(value: Value, reason: str | None) -> Value:
    if reason is None or value.gate is not None:
        return value
    return Value(value.node, value.literal, reason)


def _is_str(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _template_text(expr: ast.AST) -> str | None:
    """The constant text of an f-string, `"a" + x` or `"a%d" % x`, with `{}` for each part
    that is not a constant; None when no part is a string constant."""
    if isinstance(expr, ast.Constant):
        return expr.value if isinstance(expr.value, str) else None
    if isinstance(expr, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in expr.values)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        left, right = _template_text(expr.left), _template_text(expr.right)
        if left is None and right is None:
            return None
        return (left if left is not None else "{}") + (right if right is not None else "{}")
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mod):
        return _template_text(expr.left)
    return None


def _assigned_part(statement: ast.stmt, name: str) -> ast.AST | None:
    """The part of an assignment's value that `name` receives (`a, b = 1, 2` -> 2 for b)."""
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    for target in targets:
        if isinstance(target, ast.Name) and target.id == name:
            return statement.value
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(statement.value, (ast.Tuple, ast.List)):
            if len(target.elts) == len(statement.value.elts):
                for element, value in zip(target.elts, statement.value.elts):
                    if isinstance(element, ast.Name) and element.id == name:
                        return value
    return None


def _own_nodes(scope: ast.AST):
    """Every node of a scope's body, not descending into nested functions or classes."""
    body = [scope.body] if isinstance(scope, ast.Lambda) else list(getattr(scope, "body", []))
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _imports_from(statement: ast.AST, module: str) -> bool:
    if isinstance(statement, ast.ImportFrom):
        return statement.level == 0 and bool(statement.module) and (statement.module == module or statement.module.startswith(module + "."))
    return any(a.name.startswith(module + ".") for a in statement.names)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _char_col(line: str, byte_col: int) -> int:
    if line.isascii():
        return byte_col
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))
