"""Read a setup.py with `ast`, never running it: which sources each vendor's build compiles.

The file is walked once as the ROCm build and once as the CUDA build (`rocmlint.build.worlds`).
Names are followed through assignments, `+=`, `.append`/`.extend`, list comprehensions,
`os.path.join`/`pathlib` joins, f-strings and `glob.glob`, so that the real patterns work:

    if not IS_ROCM: ext_modules.append(CUDAExtension(sources=[...]))   # one list per vendor
    sources = glob("csrc/**/*.cu") ... if torch.version.hip: sources += hip_sources
    def sources(self): return [f"{src_dir}/kernel.cu"]                   # op builders

A string that names a C/C++/CUDA/HIP file (or a glob of them) is compiled by a build when it
reaches, in that build, the arguments of a call that is not a plain value function (a call of
`CUDAExtension`, `setup`, `load`, a project helper...), or the return value of a function
nothing in the file calls. A condition reads as in `worlds`, plus what Python itself says:
`torch.version.hip` is None on CUDA builds and `torch.version.cuda` on ROCm builds
(pytorch/pytorch#97013), while `torch.cuda.is_available()` is true on both. Conditions the
file cannot decide run both branches. `-DNAME` strings and `define_macros` become macros.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass

from rocmlint.build import BuildFacts, Item, Origin, is_source_path
from rocmlint.build.worlds import CUDA, ROCM, python_switch_in_world, selects, vendor_literal
from rocmlint.files.tree import glob_within, is_within
from rocmlint.build.budget import MAX_LIST_ELEMENTS, MAX_VALUE_CHARACTERS, WorkBudget, too_long
from rocmlint.python.imports import import_statements

_MAX_CONSTS = 8
_MAX_ITEMS = MAX_LIST_ELEMENTS
_MAX_CALL_DEPTH = 4


class _Some:
    """A value that exists but is not known: `torch.version.hip` in the ROCm build."""

    def __repr__(self) -> str:
        return "<some value>"


SOME = _Some()
_BUILD_DIR = "\0builddir"  # the directory of the build file, which relative paths start from


@dataclass(frozen=True)
class PyValue:
    consts: frozenset | None = None  # the constants it may be (str, bool, int, None, SOME); None: unknown
    items: tuple[Item, ...] = ()  # the strings that may flow into it, with where they were written


UNKNOWN = PyValue()


def _const(value, items: tuple[Item, ...] = ()) -> PyValue:
    return PyValue(frozenset({value}), items)


def _union_items(*groups: tuple[Item, ...]) -> tuple[Item, ...]:
    groups = tuple(g for g in groups if g)
    if len(groups) <= 1:
        return groups[0] if groups else ()
    merged = dict.fromkeys(groups[0])
    for group in groups[1:]:
        for item in group:
            if len(merged) >= _MAX_ITEMS:
                break
            merged.setdefault(item)
    return tuple(merged)


def _join(a: PyValue | None, b: PyValue | None) -> PyValue:
    if a is None or b is None:
        present = a or b
        return PyValue(None, present.items) if present else UNKNOWN
    consts = None
    if a.consts is not None and b.consts is not None:
        consts = a.consts | b.consts
        if len(consts) > _MAX_CONSTS:
            consts = None
    return PyValue(consts, _union_items(a.items, b.items))


def _truth_of_consts(consts: frozenset | None) -> bool | None:
    if consts is None:
        return None
    answers = {True if c is SOME else bool(c) for c in consts}
    return next(iter(answers)) if len(answers) == 1 else None


def _not(v):
    return None if v is None else not v


# Calls that compute a value from their arguments and compile nothing: what flows out is what
# flowed in. Everything else that is handed a source compiles it.
_VALUE_FUNCTIONS = {
    "sorted", "list", "set", "tuple", "str", "reversed", "frozenset", "filter", "map", "iter", "dict", "len",
    "any", "all", "bool", "int", "float", "min", "max", "enumerate", "zip", "print", "repr", "format", "isinstance",
    "hasattr", "getattr", "type", "open", "super", "range", "next", "sum",
}
_VALUE_MODULES = ("os.", "os.path.", "glob.", "pathlib.", "shutil.", "subprocess.", "logging.", "warnings.", "sys.",
                  "re.", "json.", "itertools.", "functools.", "platform.", "sysconfig.", "importlib.", "packaging.",
                  "distutils.util.", "fnmatch.", "textwrap.", "time.", "datetime.", "urllib.", "tempfile.", "io.")
_VALUE_METHODS = {
    "replace", "strip", "rstrip", "lstrip", "format", "join", "split", "rsplit", "lower", "upper", "startswith",
    "endswith", "get", "keys", "values", "items", "copy", "exists", "is_file", "is_dir", "resolve", "absolute",
    "relative_to", "with_suffix", "with_name", "as_posix", "read_text", "decode", "encode", "splitlines", "count",
    "index", "find", "warn", "warning", "info", "debug", "error", "write", "read", "mkdir", "unlink", "glob", "rglob",
    "iterdir", "is_absolute", "match", "search", "group", "fullmatch", "sub", "parse", "check_output", "run",
    "remove", "discard", "pop", "sort", "__contains__", "isdigit", "partition", "rpartition", "zfill", "title",
}
_FLOW_METHODS = {"append", "extend", "insert", "add", "update", "__iadd__"}
_GLOB_CALLS = {"glob.glob", "glob.iglob", "glob"}
_ENV_CALLS = {"os.getenv", "os.environ.get", "getenv", "environ.get"}
_DASH_D = re.compile(r"^-D([A-Za-z_][A-Za-z0-9_]*)(?:=(.*))?$")
_RENAMED_SUFFIXES = (".cu", ".cpp", ".cc", ".hip")
_ORDERINGS = {ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b,
              ast.GtE: lambda a, b: a >= b}


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    if isinstance(node, ast.Call):
        inner = _dotted(node.func)
        if inner is not None:
            parts.append(inner + "()")
            return ".".join(reversed(parts))
    return None


class _Function:
    def __init__(self, node: ast.FunctionDef | ast.AsyncFunctionDef, is_method: bool):
        self.node = node
        self.is_method = is_method
        self.called = False


class SetupPyReader:
    """Walks one setup.py as one vendor's build."""

    def __init__(self, path: str, root: str, world: str, facts: BuildFacts, budget: WorkBudget | None = None):
        self.path = path
        self.budget = budget if budget is not None else WorkBudget()
        self.root = root
        self.base = os.path.dirname(path)
        self.relative = os.path.relpath(path, root).replace(os.sep, "/")
        self.world = world
        self.facts = facts
        self.functions: dict[str, _Function] = {}
        self.aliases: dict[str, str] = {}
        self.conditions: list[tuple[str, int]] = []
        self.call_conditions: list[tuple[str, int]] = []  # the conditions of the calls being run
        self.record_reach = True
        self.depth = 0
        self.returns: list[PyValue] | None = None
        self.source_text = ""
        self.compiled_here: set[str] = set()
        # For files other than setup.py: where else a relative source path may point (op
        # builders name sources relative to the package root, not to themselves).
        self.resolve_elsewhere = None

    # --- driving ---------------------------------------------------------------------------

    def run(self, tree: ast.Module, text: str) -> None:
        self.source_text = text
        self.source_lines = text.split("\n")
        self._collect(tree)
        env: dict[str, PyValue] = {}
        self._block(tree.body, env)
        # Functions and methods the file never calls are entry points of someone else's
        # build (setup hooks, op builders): what they return or hand on is compiled.
        called_somewhere = {
            node.func.id if isinstance(node.func, ast.Name) else node.func.attr
            for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute))
        }
        for function in list(self.functions.values()):
            if not function.called:
                # A function this build never calls but the other build does is not reached
                # here, though it is walked for what it would compile.
                self.record_reach = function.node.name not in called_somewhere
                try:
                    self._call_function(function, [], {}, env, entry=True)
                finally:
                    self.record_reach = True
        # torch.utils.cpp_extension runs hipify over the sources (and the project headers
        # they include) of a ROCm build before compiling them (torch/utils/cpp_extension.py).
        # Sources only the CUDA build compiles count too: where a ROCm build does not read
        # them, the project model gates them for that; where it is not yet there (an
        # NVIDIA-only project), building them with cpp_extension on ROCm is the port.
        line = next((n.lineno for n in import_statements(tree)
                     if any("cpp_extension" in (a.name or "") for a in n.names)
                     or isinstance(n, ast.ImportFrom) and (n.module or "").endswith("cpp_extension")), None)
        if line is not None:
            why = f"{self.relative}:{line} builds it with torch.utils.cpp_extension, which hipifies it for ROCm"
            for path in self.compiled_here:
                self.facts.hipified.setdefault(path, why)

    def _collect(self, tree: ast.Module) -> None:
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    if isinstance(node, ast.Import):
                        self.aliases[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
                    elif node.module and alias.name != "*":
                        self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        self.functions.setdefault(f"{node.name}.{item.name}", _Function(item, True))
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[node.name] = _Function(node, False)

    def _qualified(self, node: ast.AST) -> str | None:
        dotted = _dotted(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        full = self.aliases.get(head, head)
        return f"{full}.{rest}" if rest else full

    def _restamp(self, items: tuple[Item, ...], line: int) -> tuple[Item, ...]:
        """Items added to a list under a condition are compiled under that condition: name the
        line that adds them (`sources += source_cuda` under `if torch.version.cuda`), which says
        more than the line that first wrote them."""
        if not self.conditions:
            return items
        origin = self._origin(line)
        return tuple(Item(item.text, origin) for item in items)

    def _origin(self, line: int) -> Origin:
        condition, condition_line = self.conditions[-1] if self.conditions else (None, None)
        return Origin(self.relative, line, condition, condition_line)

    # --- statements ------------------------------------------------------------------------

    def _block(self, body: list[ast.stmt], env: dict) -> bool:
        """Run statements; True when the block certainly ended (return/raise/exit)."""
        for statement in body:
            if self._statement(statement, env):
                return True
        return False

    def _statement(self, node: ast.stmt, env: dict) -> bool:
        self.budget.spend()
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            if node.value is None:
                return False
            value = self._value(node.value, env)
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                self._bind(target, value, env)
        elif isinstance(node, ast.AugAssign):
            value = self._value(node.value, env)
            if isinstance(node.target, ast.Name):
                current = env.get(node.target.id, UNKNOWN)
                consts = None
                if isinstance(node.op, ast.Add) and current.consts is not None and value.consts is not None:
                    consts = self._binary_consts(current.consts, value.consts, lambda a, b: a + b)
                added = self._restamp(value.items, node.lineno)
                env[node.target.id] = PyValue(consts, _union_items(current.items, added))
        elif isinstance(node, ast.Expr):
            self._value(node.value, env)
            return self._exits(node.value)
        elif isinstance(node, ast.If):
            return self._if(node, env)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            iterable = self._value(node.iter if not isinstance(node, ast.While) else node.test, env)
            branch = dict(env)
            if not isinstance(node, ast.While):
                self._bind(node.target, PyValue(None, iterable.items), branch)
            self._block(node.body, branch)
            self._block(node.orelse, branch)
            self._join_env(env, [dict(env), branch])
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                value = self._value(item.context_expr, env)
                if item.optional_vars is not None:
                    self._bind(item.optional_vars, value, env)
            return self._block(node.body, env)
        elif isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            branches = []
            body_env = dict(env)
            ended = self._block(node.body, body_env)
            if not ended:
                self._block(node.orelse, body_env)
            branches.append(body_env)
            for handler in node.handlers:
                handler_env = dict(env)
                self._block(handler.body, handler_env)
                branches.append(handler_env)
            self._join_env(env, branches)
            self._block(node.finalbody, env)
        elif isinstance(node, ast.Return):
            value = self._value(node.value, env) if node.value is not None else _const(None)
            if self.returns is not None:
                self.returns.append(value)
            return True
        elif isinstance(node, ast.Raise):
            return True
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and self.depth:
            self.functions.setdefault(node.name, _Function(node, False))
        elif isinstance(node, ast.Match):
            self._value(node.subject, env)
            outcomes = []
            for case in node.cases:
                branch = dict(env)
                self._block(case.body, branch)
                outcomes.append(branch)
            outcomes.append(dict(env))
            self._join_env(env, outcomes)
        return False

    def _segment(self, node: ast.AST) -> str:
        """The source text of a node on one line, shortened (ast.get_source_segment splits the
        whole file at every call)."""
        lines = self.source_lines[node.lineno - 1 : node.end_lineno]
        if not lines:
            return ""
        encoded = [line.encode("utf-8") for line in lines]
        encoded[-1] = encoded[-1][: node.end_col_offset]
        encoded[0] = encoded[0][node.col_offset :]
        segment = " ".join(b" ".join(encoded).decode("utf-8", errors="replace").split())
        return segment if len(segment) <= 120 else segment[:117] + "..."

    def _exits(self, call: ast.AST) -> bool:
        if isinstance(call, ast.Call):
            name = self._qualified(call.func) or ""
            return name in ("sys.exit", "exit", "quit", "os._exit")
        return False

    def _if(self, node: ast.If, env: dict) -> bool:
        value = self.truth(node.test, env)
        text = "if " + self._segment(node.test)
        if value is True:
            self.conditions.append((text, node.lineno))
            try:
                return self._block(node.body, env)
            finally:
                self.conditions.pop()
        if value is False:
            if not node.orelse:
                return False
            self.conditions.append((f"else of {text}", node.lineno))
            try:
                return self._block(node.orelse, env)
            finally:
                self.conditions.pop()
        then_env, else_env = dict(env), dict(env)
        self.conditions.append((text, node.lineno))
        try:
            then_ended = self._block(node.body, then_env)
        finally:
            self.conditions.pop()
        self.conditions.append((f"else of {text}", node.lineno))
        try:
            else_ended = self._block(node.orelse, else_env)
        finally:
            self.conditions.pop()
        live = [e for e, ended in ((then_env, then_ended), (else_env, else_ended)) if not ended]
        self._join_env(env, live or [then_env, else_env])
        return then_ended and else_ended

    @staticmethod
    def _join_env(env: dict, outcomes: list[dict]) -> None:
        names = set()
        for outcome in outcomes:
            names.update(outcome)
        for name in names:
            values = [o.get(name) for o in outcomes]
            merged = values[0]
            for other in values[1:]:
                if other is not merged:
                    merged = _join(merged, other)
            env[name] = merged if merged is not None else UNKNOWN

    def _bind(self, target: ast.AST, value: PyValue, env: dict) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._bind(element.value if isinstance(element, ast.Starred) else element, PyValue(None, value.items), env)

    # --- values ----------------------------------------------------------------------------

    def _value(self, node: ast.AST | None, env: dict) -> PyValue:
        """What an expression may be, within the caps of rocmlint.build.budget: a longer string
        is unknown, and a longer list or a string that long cuts the walk short."""
        self.budget.spend()
        value = self._evaluate(node, env)
        if value.consts is not None and any(isinstance(c, str) and too_long(c) for c in value.consts):
            self._value_too_long()
            value = PyValue(None, tuple(i for i in value.items if not too_long(i.text)))
        if len(value.items) >= _MAX_ITEMS:
            self.budget.limit(f"a list of more than {_MAX_ITEMS:,} elements in {self.relative}")
        return value

    def _value_too_long(self) -> None:
        self.budget.limit(f"a value longer than {MAX_VALUE_CHARACTERS:,} characters in {self.relative}")

    def _evaluate(self, node: ast.AST | None, env: dict) -> PyValue:
        if node is None:
            return UNKNOWN
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                if self.record_reach:
                    self.facts.reach(self.world, (self.path, node.lineno, node.col_offset), self.call_conditions + self.conditions)
                return _const(node.value, (Item(node.value, self._origin(node.lineno)),))
            if isinstance(node.value, (bool, int, float)) or node.value is None:
                return _const(node.value)
            return UNKNOWN
        if isinstance(node, ast.Name):
            if node.id == "__name__":
                return _const("__main__")  # setup.py runs as a script
            if node.id == "__file__":
                return _const(os.path.join(_BUILD_DIR, os.path.basename(self.path)))
            # A name that says ROCm/HIP is the vendor choice (`IS_ROCM = True` under some test
            # the file cannot decide), unless the file fills it with sources (`source_hip`).
            value = env.get(node.id)
            if value is not None and value.items:
                return value
            switch = self._platform_value(node.id)
            if switch is not None:
                return switch
            return value if value is not None else UNKNOWN
        if isinstance(node, ast.Attribute):
            return self._attribute(node, env)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            parts = [self._value(e.value if isinstance(e, ast.Starred) else e, env) for e in node.elts]
            return PyValue(None, _union_items(*(p.items for p in parts)))
        if isinstance(node, ast.Dict):
            parts = [self._value(v, env) for v in node.values]
            return PyValue(None, _union_items(*(p.items for p in parts)))
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            scope = dict(env)
            for generator in node.generators:
                source = self._value(generator.iter, scope)
                self._bind(generator.target, PyValue(None, source.items), scope)
            element = self._value(node.elt, scope)
            return PyValue(None, element.items)
        if isinstance(node, ast.DictComp):
            return UNKNOWN
        if isinstance(node, ast.JoinedStr):
            return self._fstring(node, env)
        if isinstance(node, ast.BinOp):
            left, right = self._value(node.left, env), self._value(node.right, env)
            consts = None
            if left.consts is not None and right.consts is not None:
                if isinstance(node.op, ast.Add):
                    consts = self._binary_consts(left.consts, right.consts, lambda a, b: a + b)
                elif isinstance(node.op, ast.Div):
                    consts = self._binary_consts(left.consts, right.consts, self._path_join)
            if consts is not None:
                items = tuple(Item(c, self._origin(node.lineno)) for c in consts if isinstance(c, str))
                return PyValue(consts, _union_items(items, left.items if isinstance(node.op, ast.Add) else ()))
            return PyValue(None, _union_items(left.items, right.items))
        if isinstance(node, ast.BoolOp):
            parts = [self._value(v, env) for v in node.values]
            truths = [self.truth(v, env) for v in node.values]
            # `x or y` / `x and y` evaluate to one of their operands.
            chosen = []
            for part, truth in zip(parts, truths):
                chosen.append(part)
                if (isinstance(node.op, ast.Or) and truth is True) or (isinstance(node.op, ast.And) and truth is False):
                    break
            merged = chosen[0]
            for other in chosen[1:]:
                merged = _join(merged, other)
            return merged
        if isinstance(node, ast.IfExp):
            truth = self.truth(node.test, env)
            if truth is True:
                return self._value(node.body, env)
            if truth is False:
                return self._value(node.orelse, env)
            return _join(self._value(node.body, env), self._value(node.orelse, env))
        if isinstance(node, ast.Call):
            return self._call(node, env)
        if isinstance(node, (ast.Compare, ast.UnaryOp)):
            truth = self.truth(node, env)
            return UNKNOWN if truth is None else _const(truth)
        if isinstance(node, ast.Subscript):
            base = self._value(node.value, env)
            self._value(node.slice, env)
            return PyValue(None, base.items)
        if isinstance(node, ast.Starred):
            return self._value(node.value, env)
        if isinstance(node, ast.NamedExpr):
            value = self._value(node.value, env)
            self._bind(node.target, value, env)
            return value
        if isinstance(node, ast.Lambda):
            return UNKNOWN
        return UNKNOWN

    def _binary_consts(self, left: frozenset, right: frozenset, function) -> frozenset | None:
        results = set()
        for a in left:
            for b in right:
                if not isinstance(a, str) or not isinstance(b, str):
                    return None
                if len(a) + len(b) > MAX_VALUE_CHARACTERS:
                    self._value_too_long()
                    return None
                results.add(function(a, b))
                if len(results) > _MAX_CONSTS:
                    return None
        return frozenset(results)

    @staticmethod
    def _path_join(*parts: str) -> str:
        joined = ""
        for part in parts:
            if part.startswith("/") or part.startswith(_BUILD_DIR):
                joined = part
            elif joined and not joined.endswith("/"):
                joined = f"{joined}/{part}"
            else:
                joined = joined + part
        return joined

    def _fstring(self, node: ast.JoinedStr, env: dict) -> PyValue:
        results = [""]
        for part in node.values:
            if isinstance(part, ast.Constant):
                results = [r + str(part.value) for r in results]
                continue
            value = self._value(part.value, env) if isinstance(part, ast.FormattedValue) else UNKNOWN
            if value.consts is None or any(not isinstance(c, (str, int)) for c in value.consts):
                return UNKNOWN
            results = [r + str(c) for r in results for c in value.consts]
            if len(results) > _MAX_CONSTS:
                return UNKNOWN
            if any(too_long(r) for r in results):
                self._value_too_long()
                return UNKNOWN
        consts = frozenset(results)
        return PyValue(consts, tuple(Item(c, self._origin(node.lineno)) for c in consts))

    def _platform_value(self, name: str) -> PyValue | None:
        """A name that says which vendor reads as the world says (SOME: set, None: unset)."""
        switch = python_switch_in_world(name, self.world)
        if switch is None:
            return None
        return _const(SOME if switch else None)

    def _attribute(self, node: ast.Attribute, env: dict) -> PyValue:
        qualified = self._qualified(node) or ""
        if qualified.endswith("version.hip"):
            return _const(SOME if self.world == ROCM else None)
        if qualified.endswith("version.cuda"):
            return _const(SOME if self.world == CUDA else None)
        if qualified.startswith("torch.cuda.") or qualified.startswith("cuda."):
            return UNKNOWN  # true on ROCm builds of PyTorch as well
        if node.attr == "parent" or node.attr == "parents":
            base = self._value(node.value, env)
            return self._dirname(base)
        if node.attr in ("stem", "name", "suffix"):
            return UNKNOWN
        switch = self._platform_value(node.attr)
        if switch is not None:
            return switch
        base = self._value(node.value, env)
        return PyValue(None, base.items)

    def _dirname(self, value: PyValue) -> PyValue:
        if value.consts is None:
            return UNKNOWN
        results = set()
        for const in value.consts:
            if not isinstance(const, str):
                return UNKNOWN
            results.add(os.path.dirname(const.rstrip("/")) if const != _BUILD_DIR else _BUILD_DIR)
        return PyValue(frozenset(results))

    def _call(self, node: ast.Call, env: dict) -> PyValue:
        name = self._qualified(node.func) or ""
        args = [self._value(a, env) for a in node.args]
        keywords = {k.arg: self._value(k.value, env) for k in node.keywords}
        short = name.rsplit(".", 1)[-1]
        # Platform predicates: is_rocm(), self.is_rocm_pytorch(), torch.version.hip ...
        if name.startswith("torch.cuda.") or name.startswith("cuda."):
            return UNKNOWN
        switch = self._platform_value(short) if short not in ("getenv", "get") else None
        if switch is not None and short not in ("CUDAExtension",):
            return switch
        if name in _ENV_CALLS or name.endswith("environ.get"):
            return self._environment(node, args)
        if name in ("os.path.join", "join", "posixpath.join") and args:
            return self._join_paths(args, node.lineno)
        if name in ("os.path.dirname",) and args:
            return self._dirname(args[0])
        if name in ("os.path.abspath", "os.path.realpath", "os.path.normpath", "pathlib.Path", "Path", "str",
                    "os.fspath", "pathlib.PurePath", "os.path.expanduser") and args:
            return args[0]
        if name in _GLOB_CALLS or (isinstance(node.func, ast.Attribute) and node.func.attr in ("glob", "rglob")):
            return self._glob(node, name, args, env)
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("resolve", "absolute", "expanduser"):
            return self._value(node.func.value, env)
        if isinstance(node.func, ast.Attribute) and node.func.attr in _FLOW_METHODS:
            receiver = node.func.value
            incoming = _union_items(*(a.items for a in args), *(k.items for k in keywords.values()))
            incoming = self._restamp(incoming, node.lineno)
            if isinstance(receiver, ast.Name):
                current = env.get(receiver.id, UNKNOWN)
                env[receiver.id] = PyValue(None, _union_items(current.items, incoming))
            return UNKNOWN
        function = self._local_function(node.func)
        if function is not None:
            return self._call_function(function, args, keywords, env)
        everything = _union_items(*(a.items for a in args), *(k.items for k in keywords.values()))
        if self._is_value_function(name, node.func):
            if isinstance(node.func, ast.Attribute) and node.func.attr in _VALUE_METHODS:
                receiver = self._value(node.func.value, env)
                everything = _union_items(receiver.items, everything)
            if name in ("bool",) and args:
                truth = _truth_of_consts(args[0].consts)
                return UNKNOWN if truth is None else _const(truth)
            return PyValue(None, everything)
        self._sink(everything, node)
        self._macros(node, env)
        return UNKNOWN

    def _is_value_function(self, name: str, func: ast.AST) -> bool:
        if name in _VALUE_FUNCTIONS or name.startswith(_VALUE_MODULES):
            return True
        return isinstance(func, ast.Attribute) and func.attr in _VALUE_METHODS

    def _local_function(self, func: ast.AST) -> _Function | None:
        if isinstance(func, ast.Name):
            return self.functions.get(func.id)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
            for key, function in self.functions.items():
                if key.endswith("." + func.attr):
                    return function
        return None

    def _call_function(self, function: _Function, args, keywords, env, entry: bool = False) -> PyValue:
        function.called = function.called or not entry
        if self.depth >= _MAX_CALL_DEPTH:
            return PyValue(None, _union_items(*(a.items for a in args)))
        parameters = [a.arg for a in function.node.args.args]
        if function.is_method and parameters[:1] in (["self"], ["cls"]):
            parameters = parameters[1:]
        # Module-level names are visible inside; the call's own arguments bind the parameters.
        local = dict(env)
        for parameter, value in zip(parameters, args):
            local[parameter] = value
        for name, value in keywords.items():
            if name:
                local[name] = value
        for parameter in parameters[len(args):]:
            local.setdefault(parameter, UNKNOWN)
        saved_returns, saved_conditions, saved_calls = self.returns, self.conditions, self.call_conditions
        self.returns = []
        self.call_conditions = saved_calls + saved_conditions
        self.conditions = []  # reasons name conditions inside the function, where they are
        self.depth += 1
        try:
            self._block(function.node.body, local)
            returns = self.returns
        finally:
            self.depth -= 1
            self.returns, self.conditions, self.call_conditions = saved_returns, saved_conditions, saved_calls
        merged = returns[0] if returns else _const(None)
        for other in returns[1:]:
            merged = _join(merged, other)
        if entry:
            self._sink(merged.items, function.node)
        return merged

    def _environment(self, node: ast.Call, args: list[PyValue]) -> PyValue:
        """os.getenv("FORCE_CUDA", "0"): unset in the ROCm build (its default), else unknown."""
        if not args or args[0].consts is None or len(args[0].consts) != 1:
            return UNKNOWN
        (variable,) = args[0].consts
        if not isinstance(variable, str):
            return UNKNOWN
        switch = python_switch_in_world(variable, self.world)
        if switch is False:
            return args[1] if len(args) > 1 else _const(None)
        return _const(SOME) if switch else UNKNOWN

    def _join_paths(self, args: list[PyValue], line: int) -> PyValue:
        results = [""]
        for arg in args:
            if arg.consts is None or any(not isinstance(c, str) for c in arg.consts):
                return PyValue(None, _union_items(*(a.items for a in args[-1:])))
            results = [self._path_join(r, c) if r else c for r in results for c in arg.consts]
            if len(results) > _MAX_CONSTS:
                return UNKNOWN
            if any(too_long(r) for r in results):
                self._value_too_long()
                return UNKNOWN
        consts = frozenset(results)
        return PyValue(consts, tuple(Item(c, self._origin(line)) for c in consts))

    def _glob(self, node: ast.Call, name: str, args: list[PyValue], env: dict) -> PyValue:
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("glob", "rglob") and name not in _GLOB_CALLS:
            base = self._value(node.func.value, env)
            if base.consts is None or not args or args[0].consts is None:
                return UNKNOWN
            patterns = {self._path_join(b, p) for b in base.consts for p in args[0].consts
                        if isinstance(b, str) and isinstance(p, str)}
            recursive = node.func.attr == "rglob"
            if recursive:
                patterns = {self._path_join(os.path.dirname(p), "**", os.path.basename(p)) for p in patterns}
        else:
            if not args or args[0].consts is None:
                return UNKNOWN
            patterns = {p for p in args[0].consts if isinstance(p, str)}
            recursive = any(k.arg == "recursive" for k in node.keywords) or any("**" in p for p in patterns)
        origin = self._origin(node.lineno)
        found: list[str] = []
        for pattern in sorted(patterns):
            found.extend(self._glob_files(pattern, recursive))
        return PyValue(None, tuple(Item(path, origin) for path in dict.fromkeys(found)))

    def _glob_files(self, pattern: str, recursive: bool) -> list[str]:
        full = self._absolute(pattern)
        if full is None:
            return []
        return glob_within(full, self.root, recursive=recursive)

    def _absolute(self, text: str) -> str | None:
        if text.startswith(_BUILD_DIR):
            text = text[len(_BUILD_DIR):].lstrip("/")
        elif os.path.isabs(text):
            return os.path.normpath(text)
        return os.path.normpath(os.path.join(self.base, text))

    # --- what a build compiles --------------------------------------------------------------

    def _sink(self, items: tuple[Item, ...], node: ast.AST) -> None:
        for item in items:
            text = item.text
            if not isinstance(text, str) or not is_source_path(text.split("*")[-1] if "*" in text else text):
                continue
            if "*" in text or "?" in text:
                paths = self._glob_files(text, "**" in text)
            else:
                path = self._absolute(text)
                paths = [path] if path and os.path.isfile(path) else self._renamed(path)
            if not paths and self.resolve_elsewhere is not None:
                paths = self.resolve_elsewhere(text)
            for path in paths:
                if is_within(path, self.root):
                    self.facts.compile(self.world, path, item.origin)
                    self.compiled_here.add(path)

    @staticmethod
    def _renamed(path: str | None) -> list[str]:
        """`csrc/api.cu` that does not exist where `csrc/api.cpp` does: a build step copies
        one into the other before compiling (flash-attention's ROCm build, xformers' HIP
        sources), so the file in the tree is what gets compiled."""
        if not path:
            return []
        stem, suffix = os.path.splitext(path)
        if suffix.lower() not in _RENAMED_SUFFIXES:
            return []
        return [stem + other for other in _RENAMED_SUFFIXES if other != suffix and os.path.isfile(stem + other)][:1]

    def _macros(self, node: ast.Call, env: dict) -> None:
        origin = self._origin(node.lineno)
        for keyword in node.keywords:
            if keyword.arg == "define_macros" and isinstance(keyword.value, (ast.List, ast.Tuple)):
                for element in keyword.value.elts:
                    if isinstance(element, ast.Tuple) and element.elts and isinstance(element.elts[0], ast.Constant):
                        macro = element.elts[0].value
                        value = element.elts[1].value if len(element.elts) > 1 and isinstance(element.elts[1], ast.Constant) else None
                        if isinstance(macro, str):
                            self.facts.define(self.world, macro, None if value is None else str(value), origin)
            elif keyword.arg == "include_dirs":
                for item in self._value(keyword.value, env).items:
                    path = self._absolute(item.text)
                    if path and is_within(path, self.root) and os.path.isdir(path):
                        self.facts.include_dirs.add(path)
        values = [self._value(a, env) for a in node.args] + [self._value(k.value, env) for k in node.keywords]
        for value in values:
            for item in value.items:
                match = _DASH_D.match(item.text) if isinstance(item.text, str) else None
                if match:
                    self.facts.define(self.world, match.group(1), match.group(2), item.origin)

    # --- conditions ------------------------------------------------------------------------

    def truth(self, node: ast.AST, env: dict) -> bool | None:
        if isinstance(node, ast.BoolOp):
            values = [self.truth(v, env) for v in node.values]
            if isinstance(node.op, ast.And):
                if any(v is False for v in values):
                    return False
                return True if all(v is True for v in values) else None
            if any(v is True for v in values):
                return True
            return False if all(v is False for v in values) else None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return _not(self.truth(node.operand, env))
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            return self._compare(node.ops[0], node.left, node.comparators[0], env)
        if isinstance(node, (ast.Compare, ast.UnaryOp)) or (
            isinstance(node, ast.Call) and self._qualified(node.func) in ("hasattr",)
        ):
            return None  # chained comparisons, -x, ~x
        value = self._value(node, env)
        return _truth_of_consts(value.consts)

    def _compare(self, op: ast.cmpop, left_node: ast.AST, right_node: ast.AST, env: dict) -> bool | None:
        if isinstance(op, (ast.In, ast.NotIn)) and self._qualified(right_node) in ("os.environ", "environ"):
            variable = self._value(left_node, env).consts
            if variable and len(variable) == 1:
                (name,) = variable
                switch = python_switch_in_world(name, self.world) if isinstance(name, str) else None
                if switch is not None:
                    return switch != isinstance(op, ast.NotIn)
            return None
        if isinstance(op, (ast.In, ast.NotIn)) and (self._qualified(right_node) or "").endswith("torch.__version__"):
            # "2.5.1+rocm6.2" / "2.5.1+cu124": the local version names the vendor.
            literal = left_node.value if isinstance(left_node, ast.Constant) else None
            vendor = vendor_literal(literal) if isinstance(literal, str) else None
            if isinstance(literal, str) and literal.lower() in ("cu", "+cu"):
                vendor = CUDA
            if vendor is not None:
                answer = vendor == self.world if self.world == ROCM or vendor == ROCM else None
                return _not(answer) if isinstance(op, ast.NotIn) else answer
            return None
        left, right = self._value(left_node, env), self._value(right_node, env)
        if isinstance(op, (ast.Is, ast.IsNot)):
            if left.consts is None or right.consts is None:
                return None
            answers = set()
            for a in left.consts:
                for b in right.consts:
                    if a is SOME or b is SOME:
                        answers.add(False if (a is None or b is None) else None)
                    else:
                        answers.add(a is b or (a == b and type(a) is type(b)))
            answer = next(iter(answers)) if len(answers) == 1 else None
            return _not(answer) if isinstance(op, ast.IsNot) and answer is not None else (None if answer is None else answer)
        if isinstance(op, (ast.Eq, ast.NotEq)):
            answer = self._equal(left, right)
            return _not(answer) if isinstance(op, ast.NotEq) else answer
        if isinstance(op, (ast.In, ast.NotIn)):
            if left.consts is not None and right.consts is not None:
                answers = {isinstance(a, str) and isinstance(b, str) and a in b for a in left.consts for b in right.consts}
                answer = next(iter(answers)) if len(answers) == 1 else None
                return _not(answer) if isinstance(op, ast.NotIn) else answer
            return None
        order = _ORDERINGS.get(type(op))
        if order is None or left.consts is None or right.consts is None:
            return None
        answers = set()
        for a in left.consts:
            for b in right.consts:
                try:
                    answers.add(bool(order(a, b)))
                except TypeError:
                    return None
        return next(iter(answers)) if len(answers) == 1 else None

    def _equal(self, left: PyValue, right: PyValue) -> bool | None:
        if left.consts is None or right.consts is None or SOME in (left.consts or ()) or SOME in (right.consts or ()):
            known = right if left.consts is None or SOME in left.consts else left
            other = left if known is right else right
            if known.consts is not None and SOME not in known.consts and (other.consts is None or SOME in other.consts):
                answers = {selects(c, self.world) if isinstance(c, str) else None for c in known.consts}
                if len(answers) == 1:
                    return next(iter(answers))
            return None
        answers = {a == b for a in left.consts for b in right.consts}
        return next(iter(answers)) if len(answers) == 1 else None


def read_setup_py(
    path: str, root: str, text: str, facts: BuildFacts | None = None, budget: WorkBudget | None = None
) -> BuildFacts:
    """Walk one setup.py (absolute path) as both builds; a syntax error is reported, not raised.
    Each statement and expression spends a step of `budget` (OutOfBudget ends the walk), and a
    cap that cuts it short is noted there."""
    facts = facts or BuildFacts()
    budget = budget if budget is not None else WorkBudget()
    try:
        tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        facts.problems.append(f"{path}: not read: {type(exc).__name__}: {exc}")
        return facts
    if path not in facts.files_read:
        facts.files_read.append(path)
    for world in (ROCM, CUDA):
        try:
            SetupPyReader(path, root, world, facts, budget).run(tree, text)
        except RecursionError:
            facts.problems.append(f"{path}: not read: nested too deeply")
    return facts


# --- torch extension builders outside setup.py ----------------------------------------------------

_CPP_EXTENSION = re.compile(r"^\s*(?:from\s+torch\.utils(?:\.cpp_extension\s+import|\s+import\s+cpp_extension)|import\s+torch\.utils\.cpp_extension)", re.M)

# A CUDA extension build (SYCL and CPU-only extensions are not hipified).
_CUDA_BUILD = re.compile(r"\bCUDAExtension\b|\bcpp_extension\.load(?:_inline)?\b|import\b[^\n]*\bload(?:_inline)?\b")


def read_extension_builders(
    root: str, python_files: list[str], sources: list[str], text_of, facts: BuildFacts, budget: WorkBudget | None = None,
    problems: list[str] | None = None,
) -> None:
    """Python files that build torch extensions and that the build readers did not walk
    (DeepSpeed's op builders, `torch.utils.cpp_extension.load(...)` JIT builds, a sub-project's
    own setup.py), and the modules beside them that import them: every C/C++ source they name is hipified when the ROCm build compiles it, because
    `torch.utils.cpp_extension` runs hipify on a ROCm torch. Only the hipify fact is recorded:
    whether the ROCm build compiles a file at all is for the build files to say."""
    builders: dict[str, int] = {}
    for path in python_files:
        if path in facts.files_read:
            continue  # a setup.py the build readers walked says this itself
        text = text_of(path)
        match = _CPP_EXTENSION.search(text) if text and "cpp_extension" in text else None
        if match and _CUDA_BUILD.search(text):
            builders[path] = text.count("\n", 0, match.start()) + 1
    if not builders:
        return
    # Modules that import a builder from beside it (`from .builder import CUDAOpBuilder`).
    users: dict[str, str] = {}
    stems = {(os.path.dirname(p), os.path.splitext(os.path.basename(p))[0]): p for p in builders}
    for path in python_files:
        if path in builders or os.path.basename(path) == "setup.py":
            continue
        directory = os.path.dirname(path)
        text = None
        for (builder_dir, stem), builder in stems.items():
            if builder_dir != directory:
                continue
            text = text if text is not None else (text_of(path) or "")
            package = os.path.basename(directory)
            if re.search(rf"^\s*from\s+(?:\.|{re.escape(package)}\.){re.escape(stem)}\s+import\b", text, re.M):
                users[path] = builder
                break
    by_name: dict[str, list[str]] = {}
    for source in sources:
        by_name.setdefault(os.path.basename(source), []).append(source)

    def elsewhere(text: str) -> list[str]:
        """`csrc/adam/fused_adam.cu` named from op_builder/: every project file with that path tail."""
        tail = os.path.normpath(text).replace(os.sep, "/").lstrip("./")
        return [p for p in by_name.get(os.path.basename(tail), []) if p.replace(os.sep, "/").endswith("/" + tail)]

    for path, builder in [(p, p) for p in builders] + list(users.items()):
        text = text_of(path)
        if not text:
            continue
        try:
            tree = ast.parse(text, filename=path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue  # not a build file: its problems are the Python checks' to report
        named = BuildFacts()
        budget = budget if budget is not None else WorkBudget()
        reader = SetupPyReader(path, root, ROCM, named, budget)
        reader.resolve_elsewhere = elsewhere
        try:
            reader.run(tree, text)
        except RecursionError:
            continue
        limits = budget.take_limits()
        if limits:
            # Cut short: what it names is unknown, as for any build file not fully read.
            if problems is not None:
                problems.append(f"{path}: not fully read: {'; '.join(limits)}")
            continue
        builder_at = f"{os.path.relpath(builder, root).replace(os.sep, '/')}:{builders[builder]}"
        for source, origin in named.compiled[ROCM].items():
            facts.hipified.setdefault(
                source, f"{origin.file}:{origin.line} names it for a torch.utils.cpp_extension build ({builder_at}), which hipifies it for ROCm"
            )
