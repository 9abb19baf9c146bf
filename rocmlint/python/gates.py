"""What "already gated" means for Python code, for every check.

Code that only runs on one platform was written with ROCm in mind and must not be flagged:
precision on half-ported code bases depends on this module.

A statement is gated when it sits under an ``if``/``elif``/``else`` (or a conditional
expression) whose test asks which GPU stack is in use (``torch.version.hip``,
``torch.version.cuda``, ``is_rocm()``, ``IS_HIP``, ``current_platform.is_rocm()``, ...) — both
sides count — or after an early exit on such a test in the same block, or under
``if TYPE_CHECKING:``. Imports inside a ``try`` body that has an ``except`` clause, or inside
``with contextlib.suppress(...)``, are gated for import checks.
"""

from __future__ import annotations

import ast
import functools
import os
import re

from rocmlint.findings import excerpt
from rocmlint.python.imports import dotted_name, import_statements, module_aliases
from rocmlint.platforms import names_platform

# Answers about other files than the one checked: kept with a cached result (rocmlint.files.result_cache).
from rocmlint.files.result_cache import ask_again, asked_since, external_input, questions_so_far
from rocmlint.files.tree import KeptAnswers

_PLATFORM_STRINGS = {"rocm", "hip", "amd", "nvidia"}
# Qualified names that tell the stack apart: `torch.version.hip` is None on CUDA builds,
# `torch.version.cuda` is None on ROCm builds (pytorch/pytorch#97013); vLLM-style
# `current_platform.is_cuda()` is NVIDIA only. (`is_cuda_alike()` is true on both stacks, so
# code under it runs on ROCm and is not gated.)
_PLATFORM_ATTR_SUFFIXES = ("version.hip", "version.cuda", "platform.is_cuda")


def _names_a_stack(node: ast.AST) -> bool:
    """The plain spelling test: does this expression mention a GPU stack by name?"""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute):
            dotted = dotted_name(sub)
            if dotted and dotted.endswith(_PLATFORM_ATTR_SUFFIXES):
                return True
            if names_platform(sub.attr):
                return True
        elif isinstance(sub, ast.Name):
            if names_platform(sub.id) or sub.id == "TYPE_CHECKING":
                return True
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            if sub.value.lower() in _PLATFORM_STRINGS:
                return True
    return False


def is_platform_test(test: ast.AST, predicates=None) -> bool:
    """Does this condition ask which GPU stack is in use?

    `predicates` (a PlatformPredicates) also recognises the project's own helpers whose
    result depends on the stack, such as `is_sm_at_least_100()` defined with
    `torch.version.cuda`, and flags assigned from such a test.
    """
    if _names_a_stack(test):
        return True
    return predicates is not None and predicates.mentions_predicate(test)


def _names_amd(identifier: str) -> bool:
    return names_platform(identifier) and not re.search(r"nvidia|nvcc", identifier, re.I)


def short_source(node: ast.AST, limit: int = 80) -> str:
    """The node's source on one line, cut to `limit` characters, for a gate's reason."""
    try:
        return excerpt(ast.unparse(node), limit)
    except (ValueError, RecursionError, AttributeError):  # pragma: no cover - exotic trees
        return "..."


# Calls that end a test or a script: `if not is_rocm(): pytest.skip(...)` gates what follows.
_EXIT_CALLS = ("pytest.skip", "skip", "sys.exit", "exit", "quit", "os._exit", "pytest.exit", "unittest.skip")
# Decorators that skip a test when their condition holds (pytest, unittest, torch's helpers).
SKIP_DECORATORS = ("skipif", "skipIf", "skipUnless", "skip_if", "skip_unless")


def _exits(body: list[ast.stmt]) -> bool:
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
        return True
    if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
        name = dotted_name(last.value.func) or ""
        return name in _EXIT_CALLS or name.endswith((".skip", ".exit"))
    return False


def _is_suppress_with(node: ast.With) -> bool:
    for item in node.items:
        call = item.context_expr
        if isinstance(call, ast.Call):
            name = dotted_name(call.func) or ""
            if name == "suppress" or name.endswith(".suppress"):
                return True
    return False


def _platform_decorator(decorator: ast.AST, predicates) -> bool:
    """`@pytest.mark.skipif(torch.version.hip, ...)`, `@unittest.skipIf(IS_ROCM, ...)`,
    `@skipIfRocm`, `@requires_cuda_sm90` where that predicate is the project's."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = dotted_name(target) or ""
    if names_platform(name.rsplit(".", 1)[-1]):
        return True
    if isinstance(decorator, ast.Call) and name.rsplit(".", 1)[-1] in SKIP_DECORATORS:
        conditions = decorator.args[:1] + [k.value for k in decorator.keywords if k.arg == "condition"]
        return any(is_platform_test(c, predicates) for c in conditions)
    return False


def _module_mark(module: ast.Module, predicates) -> ast.stmt | None:
    """`pytestmark = pytest.mark.skipif(<platform test>, ...)` (or a list of marks)."""
    for statement in module.body:
        if isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            if any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in targets) and statement.value is not None:
                marks = statement.value.elts if isinstance(statement.value, (ast.List, ast.Tuple)) else [statement.value]
                if any(_platform_decorator(mark, predicates) for mark in marks):
                    return statement
    return None


class BlockFacts:
    """What python_gate asks of a module's statement lists, computed once per list, so that
    gating every statement of a module of n statements costs O(n), not O(n^2)."""

    def __init__(self):
        self._positions: dict[tuple[int, str], dict[int, int]] = {}
        self._first_exit: dict[tuple[int, str], int | None] = {}
        self._module_marks: dict[int, ast.stmt | None] = {}

    def position(self, parent: ast.AST, block: str, child: ast.AST) -> int | None:
        """The index of `child` in `parent.<block>`, or None when it is not a statement there."""
        key = (id(parent), block)
        positions = self._positions.get(key)
        if positions is None:
            statements = getattr(parent, block, None)
            positions = {id(s): i for i, s in enumerate(statements)} if isinstance(statements, list) else {}
            self._positions[key] = positions
        return positions.get(id(child))

    def first_exit(self, parent: ast.AST, block: str, predicates) -> int | None:
        """The index of the first `if <platform test>: ... exit` in `parent.<block>`."""
        key = (id(parent), block)
        if key not in self._first_exit:
            found = None
            for index, statement in enumerate(getattr(parent, block)):
                if isinstance(statement, ast.If) and (_exits(statement.body) or _exits(statement.orelse)):
                    if is_platform_test(statement.test, predicates):
                        found = index
                        break
            self._first_exit[key] = found
        return self._first_exit[key]

    def module_mark(self, module: ast.Module, predicates) -> ast.stmt | None:
        if id(module) not in self._module_marks:
            self._module_marks[id(module)] = _module_mark(module, predicates)
        return self._module_marks[id(module)]


def python_gate(
    node: ast.AST, parents: dict[int, ast.AST], *, import_guard: bool = False, predicates=None, facts: BlockFacts | None = None
) -> str | None:
    """Why `node` is under a platform gate, or None. With import_guard, try/except and
    suppress() count too.

    `parents` maps id(child) -> parent for the whole module (see PythonIndex); `predicates`
    knows the project's helper predicates (see PlatformPredicates); `facts` keeps what is
    learnt of the module's statement lists between calls (pass the same one for one module).
    """
    facts = facts if facts is not None else BlockFacts()
    child = node
    parent = parents.get(id(child))
    while parent is not None:
        if isinstance(parent, (ast.If, ast.IfExp, ast.While)) and child is not parent.test:
            if is_platform_test(parent.test, predicates):
                keyword = "while" if isinstance(parent, ast.While) else "if"
                return f"under `{keyword} {short_source(parent.test)}` (line {parent.lineno})"
        elif isinstance(parent, ast.BoolOp) and child is not parent.values[0]:
            # `is_rocm() or torch.compile(...)`, `not IS_HIP and import_module("pynvml")`
            earlier = parent.values[: parent.values.index(child)] if child in parent.values else []
            for value in earlier:
                if is_platform_test(value, predicates):
                    return f"after `{short_source(value)}` in `{short_source(parent)}` (line {parent.lineno})"
        elif import_guard and isinstance(parent, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            if parent.handlers and facts.position(parent, "body", child) is not None:
                return f"inside `try:` with an `except` clause (line {parent.lineno})"
        elif import_guard and isinstance(parent, ast.With) and _is_suppress_with(parent):
            return f"inside `with {short_source(parent.items[0].context_expr)}` (line {parent.lineno})"
        elif isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            # Code in a class or function named for AMD's stack (`ROCmConfigHeuristic`,
            # `_rocm_attention`) is written for ROCm. NVIDIA names do not count: helpers such as
            # `nvidia_gpu_count()` are often called on every platform.
            if _names_amd(parent.name) and facts.position(parent, "body", child) is not None:
                kind = "class" if isinstance(parent, ast.ClassDef) else "function"
                return f"in {kind} `{parent.name}`, named for ROCm (line {parent.lineno})"
            for decorator in parent.decorator_list:
                if _platform_decorator(decorator, predicates):
                    return f"in `{parent.name}`, skipped on one GPU stack by `@{short_source(decorator)}` (line {decorator.lineno})"
        elif isinstance(parent, ast.Module):
            mark = facts.module_mark(parent, predicates)
            if mark is not None and mark is not child:
                return f"in a test module skipped on one GPU stack by `{short_source(mark)}` (line {mark.lineno})"
        # An early exit on a platform test earlier in the same block gates what follows:
        #   if torch.version.hip: return fallback()
        for block in ("body", "orelse", "finalbody"):
            index = facts.position(parent, block, child)
            if index is not None:
                first = facts.first_exit(parent, block, predicates)
                if first is not None and first < index:
                    earlier = getattr(parent, block)[first]
                    return f"after `if {short_source(earlier.test)}:` exits early (line {earlier.lineno})"
        child, parent = parent, parents.get(id(parent))
    return None


class PlatformPredicates:
    """The project's own platform predicates, as a module uses them.

    A function is a platform predicate when what it returns is a platform test
    (`return torch.version.cuda is not None and capability >= (10, 0)`), or it returns a
    constant under one (`if is_rocm(): return False`); a name is a platform flag when the
    module assigns it a platform test (`IS_SM90 = torch.version.cuda and ...`). They are
    found in the module itself and, through its imports, in the modules it imports from the
    same source tree (read, never imported), following predicates that call predicates a
    few levels deep.
    """

    def __init__(self, local: "_LocalPredicates", path: str | None, aliases: dict[str, str], relative_aliases: dict[str, str]):
        self.local = local
        self.path = path
        self.aliases = aliases
        self._relative_aliases = relative_aliases

    @classmethod
    def of_module(cls, tree: ast.AST, path: str | None, aliases: dict[str, str]) -> "PlatformPredicates":
        return cls(_LocalPredicates(tree), path, aliases, _relative_imports(tree, path))

    def mentions_predicate(self, test: ast.AST) -> bool:
        for sub in ast.walk(test):
            target = sub.func if isinstance(sub, ast.Call) else sub
            if isinstance(target, ast.Name):
                if self.local.is_predicate(target.id, self):
                    return True
                qualified = self.imported(target.id)
                if qualified and _imported_predicate(self.path, qualified, 0):
                    return True
            elif isinstance(target, ast.Attribute) and isinstance(sub, ast.Call):
                dotted = dotted_name(target)
                if dotted:
                    head, _, rest = dotted.partition(".")
                    qualified = self.imported(head)
                    if qualified and rest and _imported_predicate(self.path, _attribute_of(qualified, rest), 0):
                        return True
        return False

    def imported(self, name: str) -> str | None:
        """Where an imported name comes from: `pkg.module.name`, or `file:/dir/module:name` for
        relative imports."""
        qualified = self._relative_aliases.get(name) or self.aliases.get(name)
        if qualified and ("." in qualified or qualified.startswith(_FILE_PREFIX)):
            return qualified
        return None


def _attribute_of(qualified: str, attribute: str) -> str:
    """`module.attr` for an imported module: `pkg.utils` + `is_hopper`, or for a relative
    `from .utils import platform`, `file:/dir/utils:platform` + `is_hopper` ->
    `file:/dir/utils/platform:is_hopper`."""
    if qualified.startswith(_FILE_PREFIX):
        module, _, name = qualified.rpartition(":")
        return f"{module}/{name}:{attribute}"
    return f"{qualified}.{attribute}"


class _Expression:
    """An expression as the predicate search reads it: whether it names a GPU stack itself, and
    the names it uses or calls, in `ast.walk` order. Kept instead of the expression's nodes:
    the predicates of imported modules stay cached for the whole scan, and holding their
    functions' nodes kept most of each module's syntax tree alive."""

    __slots__ = ("names_a_stack", "names")

    def __init__(self, expression: ast.AST):
        self.names_a_stack = _names_a_stack(expression)
        names = []
        for sub in ast.walk(expression):
            target = sub.func if isinstance(sub, ast.Call) else sub
            if isinstance(target, ast.Name):
                names.append(target.id)
        self.names = tuple(names)


def _function_tests(function: ast.AST) -> tuple[tuple[_Expression, bool], ...]:
    """What makes a function a platform predicate, in `ast.walk` order: each returned value that
    is not a constant (`(value, True)`: a platform test there is enough), and each `if` test
    (`(test, whether its body returns True or False)`)."""
    tests = []
    for sub in ast.walk(function):
        if sub is not function and isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(sub, ast.Return) and sub.value is not None:
            if not isinstance(sub.value, ast.Constant):
                tests.append((_Expression(sub.value), True))
        elif isinstance(sub, ast.If):
            returns_bool = any(isinstance(s, ast.Return) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, bool) for s in sub.body)
            tests.append((_Expression(sub.test), returns_bool))
    return tuple(tests)


class _LocalPredicates:
    def __init__(self, tree: ast.AST):
        self.functions: dict[str, tuple[tuple[_Expression, bool], ...]] = {}
        self.flags: dict[str, _Expression] = {}
        for statement in getattr(tree, "body", []):
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[statement.name] = _function_tests(statement)
            elif isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
                self.flags[statement.targets[0].id] = _Expression(statement.value)
        self._known: dict[str, bool] = {}

    def is_predicate(self, name: str, context: PlatformPredicates | None, depth: int = 0) -> bool:
        if name in self._known:
            return self._known[name]
        self._known[name] = False  # recursion guard
        answer = False
        if name in self.functions:
            answer = _returns_platform_test(self.functions[name], self, context, depth)
        elif name in self.flags:
            answer = _test_with(self.flags[name], self, context, depth)
        self._known[name] = answer
        return answer


def _test_with(expression: _Expression, local: _LocalPredicates, context, depth: int) -> bool:
    if expression.names_a_stack:
        return True
    if depth >= 3:
        return False
    for name in expression.names:
        if name in local.functions or name in local.flags:
            if local.is_predicate(name, context, depth + 1):
                return True
        elif context is not None:
            qualified = context.imported(name)
            if qualified and _imported_predicate(context.path, qualified, depth + 1):
                return True
    return False


def _returns_platform_test(tests: tuple[tuple[_Expression, bool], ...], local: _LocalPredicates, context, depth: int) -> bool:
    # Every test is tried in order, even one whose outcome cannot count: trying it fills the
    # caches of the names it uses, as reading the function did before (same answers later).
    return any(_test_with(test, local, context, depth) and counts for test, counts in tests)


def _relative_imports(tree: ast.AST, path: str | None) -> dict[str, str]:
    """`from .utils import is_hopper` -> {"is_hopper": "<package>.utils.is_hopper"}, spelled
    with the file-system package path so that `_imported_predicate` can find the file."""
    names: dict[str, str] = {}
    if path is None:
        return names
    for node in import_statements(tree):
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            base = os.path.dirname(os.path.abspath(path))
            for _ in range(node.level - 1):
                base = os.path.dirname(base)
            module_path = os.path.join(base, *(node.module.split(".") if node.module else []))
            for alias in node.names:
                if alias.name != "*":
                    names[alias.asname or alias.name] = f"{_FILE_PREFIX}{module_path}:{alias.name}"
    return names


_FILE_PREFIX = "file:"
# The predicates of modules read through imports: file -> (hash of the bytes parsed, predicates).
_MODULE_CACHE: dict[str, tuple[str, "PlatformPredicates | None"]] = KeptAnswers()
_MAX_MODULE_BYTES = 1024 * 1024
# What imported_module_source says in place of a hash: a module not parsed.
_OVER_THE_LIMIT, _UNREADABLE = "over the size limit", "unreadable"


def _module_file(importer: str | None, module: str) -> str | None:
    """The source file of `module` in the importer's own source tree, if it is there: the
    directory above the importer's top-level package (or `src/`) is where imports start."""
    if importer is None:
        return None
    if module.startswith(_FILE_PREFIX):
        base = module[len(_FILE_PREFIX):]
        candidates = [base + ".py", os.path.join(base, "__init__.py")]
    else:
        directory = os.path.dirname(os.path.abspath(importer))
        while os.path.isfile(os.path.join(directory, "__init__.py")):
            directory = os.path.dirname(directory)
        parts = module.split(".")
        candidates = [os.path.join(directory, *parts) + ".py", os.path.join(directory, *parts, "__init__.py")]
    for candidate in candidates:
        if os.path.isfile(candidate):
            return candidate
    return None


# The answers of _imported_predicate by (the importer's folder, the name), with the questions
# computing them asked (None: computed where nothing was recorded).
_IMPORTED_CACHE: dict[tuple[str, str], tuple[bool, list | None]] = KeptAnswers()
_IMPORTED_IN_PROGRESS: set[tuple[str, str]] = set()


def _imported_predicate(importer: str | None, qualified: str, depth: int) -> bool:
    """Is `package.module.name` (or `file:/path/module:name`) a platform predicate or flag?

    What the answer depends on is the files of the modules looked in (imported_module_source,
    asked for each, however deep): a kept result checks those, which costs a hash of each
    rather than parsing them again. An answer taken from memory asks again what computing it
    asked (result_cache.ask_again)."""
    if depth > 3 or importer is None:
        return False
    key = (os.path.dirname(os.path.abspath(importer)), qualified)
    if key in _IMPORTED_IN_PROGRESS:
        return False  # an import cycle
    start = questions_so_far()
    known = _IMPORTED_CACHE.get(key)
    if known is not None and (start is None or known[1] is not None):
        if start is not None:
            ask_again(known[1])
        return known[0]
    if len(_IMPORTED_CACHE) > 4096:
        _IMPORTED_CACHE.clear()
    _IMPORTED_IN_PROGRESS.add(key)
    try:
        answer = _find_imported_predicate(importer, qualified, depth)
    finally:
        _IMPORTED_IN_PROGRESS.discard(key)
    _IMPORTED_CACHE[key] = (answer, asked_since(start) if start is not None else None)
    return answer


@external_input
def imported_module_source(importer: str, module: str) -> list | None:
    """[the file of `module` seen from `importer` (_module_file), a hash of its bytes (or why
    there is none)], or None where the module is not in the importer's source tree."""
    path = _module_file(importer, module)
    if path is None:
        return None
    try:
        size = os.stat(path).st_size
        if size > _MAX_MODULE_BYTES:
            return [path, _OVER_THE_LIMIT]
        with open(path, "rb") as handle:
            data = handle.read(_MAX_MODULE_BYTES + 1)
    except OSError:
        return [path, _UNREADABLE]
    return [path, _module_digest(data)]


def _module_digest(data: bytes) -> str:
    import hashlib

    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _find_imported_predicate(importer: str, qualified: str, depth: int) -> bool:
    if qualified.startswith(_FILE_PREFIX):
        module, _, name = qualified.rpartition(":")
    else:
        module, _, name = qualified.rpartition(".")
    source = imported_module_source(importer, module)
    if source is None:
        return False
    context = _load_module(*source)
    if context is None:
        return False
    return context.local.is_predicate(name, context, depth)


def _load_module(path: str, digest: str) -> "PlatformPredicates | None":
    """The predicates of another module of the project, parsed once per version of its bytes:
    `digest` is imported_module_source's hash of them (or why there is none), the answer a
    kept result relies on, so that what is parsed and what is kept agree."""
    if digest in (_OVER_THE_LIMIT, _UNREADABLE):
        return None
    cached = _MODULE_CACHE.get(path)
    if cached is not None and cached[0] == digest:
        return cached[1]
    context, parsed = None, None
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_MODULE_BYTES + 1)
        parsed = _module_digest(data)
        if len(data) <= _MAX_MODULE_BYTES:
            tree = ast.parse(data, filename=path)
            context = PlatformPredicates.of_module(tree, path, module_aliases(tree))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        context = None
    if len(_MODULE_CACHE) > 512:
        _MODULE_CACHE.clear()
    if parsed is not None:
        # Kept under the hash of what was parsed: a file changed since `digest` was taken is
        # parsed again the next time it is asked for with its new hash.
        _MODULE_CACHE[path] = (parsed, context)
    return context


# --- C/C++ preprocessor regions ------------------------------------------------------------

# --- Python modules for one GPU stack -------------------------------------------------------

# A module whose own name, or whose package directories, name one vendor is code for that
# stack: vLLM's `models/*/nvidia/` and `models/*/amd/`, `rocm_aiter_mla.py`, `aiter_backend.py`.
# "cuda" is not such a word: `cuda_utils.py` serves ROCm builds too (torch.cuda is HIP there).
_STACK_WORDS = {"rocm": "ROCm", "hip": "ROCm", "amd": "ROCm", "aiter": "ROCm (aiter)", "nvidia": "NVIDIA"}


@external_input
def python_module_gate(path: str | None) -> str | None:
    """Why a whole Python module is code for one GPU stack, by its name, or None."""
    if not path:
        return None
    absolute = os.path.abspath(path)
    directory = os.path.dirname(absolute)
    # The file's own name and its package directories count word by word (`rocm_aiter_mla`);
    # a plain directory only when it is named for a stack outright (`tests/rocm/`), since the
    # folder a project was unpacked into (`amd_aiter-0.1.7/`) says nothing about one module.
    names = [os.path.splitext(os.path.basename(absolute))[0]]
    if os.path.isfile(os.path.join(directory, "__init__.py")):
        while os.path.isfile(os.path.join(directory, "__init__.py")):
            names.append(os.path.basename(directory))
            directory = os.path.dirname(directory)
    elif os.path.basename(directory).lower() in _STACK_WORDS and _below_project_start(absolute):
        word = os.path.basename(directory).lower()
        return f"a module for {_STACK_WORDS[word]} only, by its directory ({os.path.basename(directory)}/)"
    for name in names:
        for word in re.split(r"[_\-.]", name.lower()):
            if word in _STACK_WORDS:
                return f"a module for {_STACK_WORDS[word]} only, by its name ({name})"
    return None


def _below_project_start(path: str) -> bool:
    """Whether the file's folder lies inside its project, not at its root or above: the
    folder a checkout was put in (`~/amd/`) is no part of the code."""
    from rocmlint.files.project_start import folders_in_project

    return bool(folders_in_project(os.path.abspath(path)))


@external_input
def own_module(importer: str | None, module: str) -> bool:
    """Is `module` (a top-level name) part of the importer's own source tree: its own package,
    or a module beside its top-level package? Such an import is the project's, not a
    dependency's."""
    if not importer:
        return False
    return _own_module_in(os.path.dirname(os.path.abspath(importer)), module)


@functools.lru_cache(maxsize=4096)
def _own_module_in(directory: str, module: str) -> bool:
    packaged = os.path.isfile(os.path.join(directory, "__init__.py"))
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        directory = os.path.dirname(directory)
    # A script outside any package (`tests/test_x.py`) also sees the package beside its folder.
    places = [directory] if packaged else [directory, os.path.dirname(directory)]
    return any(os.path.isfile(os.path.join(d, module + ".py")) or os.path.isfile(os.path.join(d, module, "__init__.py")) for d in places)


# Where a Python project declares what it depends on, in its own folder.
_DEPENDENCY_FILES = ("requirements.txt", "pyproject.toml", "setup.py", "setup.cfg")


@external_input
def declared_dependency(importer: str | None, distributions: list) -> str | None:
    """Which of `distributions` the importer's project declares as a dependency, and where
    (`nvidia-ml-py (requirements.txt)`), or None. The project is the nearest folder above the
    file with a pyproject.toml or setup.py (not above a git work tree's top)."""
    if not importer:
        return None
    from rocmlint.files.tree import ProjectFiles

    directory = os.path.dirname(os.path.abspath(importer))
    while not any(os.path.isfile(os.path.join(directory, name)) for name in ("pyproject.toml", "setup.py")):
        parent = os.path.dirname(directory)
        if parent == directory or os.path.isdir(os.path.join(directory, ".git")):
            return None
        directory = parent
    files = ProjectFiles(directory)
    words = re.compile(r"(?<![\w.-])(" + "|".join(re.escape(d) for d in distributions) + r")(?![\w.-])", re.I)
    for name in _DEPENDENCY_FILES:
        text = files.text(os.path.join(directory, name)) if os.path.isfile(os.path.join(directory, name)) else None
        hit = words.search(re.sub(r"(?m)#.*$", "", text)) if text else None
        if hit:
            return f"{hit.group(1)} ({name})"
    return None


# --- which side of a platform test: does code run on AMD at all? ------------------------------
#
# The gates above are two-sided: code under any platform test is code for one stack, and the
# developer who wrote the test has thought about both. Reachability across modules needs the
# side: a module imported only under `if current_platform.is_rocm():` is on the AMD path, one
# imported only in the `else:` is not. A test's value on an AMD machine running a ROCm build of
# PyTorch is read from the names in it; what cannot be read stays unknown (None).

# Names whose value on ROCm is known though they say "cuda": torch.cuda is ROCm's too.
_TRUE_ON_ROCM = ("torch.cuda.is_available", "torch.cuda.device_count", "is_cuda_alike", "torch.backends.cuda.is_built")
# An identifier that asks "is this NVIDIA's stack?" (`is_cuda()`, `IS_CUDA`, `_is_cuda`,
# `on_nvidia_gpu`); not `use_cuda` / `has_cuda` / `cuda`, which usually mean "a GPU is there".
_ASKS_NVIDIA = re.compile(r"(?i)^_?(is|on|running_on)_?(cuda|nvidia|nv)(_platform|_build|_gpu)?$|nvidia")


def value_on_amd(test: ast.AST) -> bool | None:
    """The truth of a condition on an AMD machine with a ROCm build of PyTorch, where its names
    say it (`torch.version.hip` is set, `torch.version.cuda` is None, `is_rocm()` is true,
    `current_platform.is_cuda()` is false), else None."""
    return _value_on(test, amd=True)


def value_on_nvidia(test: ast.AST) -> bool | None:
    """The same on an NVIDIA machine with a CUDA build of PyTorch: `torch.version.hip` is None,
    `is_rocm()`, `_use_aiter` and `on_gfx950()` are false, `torch.version.cuda` and `is_cuda()`
    are true."""
    return _value_on(test, amd=False)


def _value_on(test: ast.AST, amd: bool) -> bool | None:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        value = _value_on(test.operand, amd)
        return None if value is None else not value
    if isinstance(test, ast.BoolOp):
        values = [_value_on(v, amd) for v in test.values]
        if isinstance(test.op, ast.And):
            return False if False in values else (True if all(v is True for v in values) else None)
        return True if True in values else (False if all(v is False for v in values) else None)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant) \
            and test.comparators[0].value is None and isinstance(test.ops[0], (ast.Is, ast.IsNot)):
        value = _value_on(test.left, amd)
        if value is None:
            return None
        return value if isinstance(test.ops[0], ast.IsNot) else not value
    if isinstance(test, ast.Call) and not test.args:
        return _value_on(test.func, amd)
    if isinstance(test, (ast.Name, ast.Attribute)):
        dotted = dotted_name(test) or ""
        last = dotted.rsplit(".", 1)[-1]
        if dotted.endswith("version.hip"):
            return amd
        if dotted.endswith("version.cuda"):
            return not amd
        if dotted.endswith(_TRUE_ON_ROCM) or last in _TRUE_ON_ROCM:
            return True  # a GPU through torch.cuda, on either stack
        if (names_platform(last) or re.search(r"(?i)aiter", last)) and not re.search(r"(?i)nvidia|nvcc", last):
            return amd  # is_rocm, IS_HIP, use_rocm, on_amd_gpu, _use_aiter (aiter is ROCm's), on_gfx950
        if _ASKS_NVIDIA.search(last) or dotted.endswith("platform.is_cuda"):
            return not amd
    return None


def _skips_on(decorator: ast.AST, amd: bool) -> bool:
    """`@skipIfRocm`, `@pytest.mark.skipif(torch.version.hip, ...)`, `@unittest.skipUnless(
    IS_CUDA, ...)`: a test that never runs on AMD (or, with amd=False, `@skipIfCuda`, ...: one
    that never runs on NVIDIA)."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = (dotted_name(target) or "").rsplit(".", 1)[-1]
    words = "rocm|hip|amd" if amd else "cuda|nvidia"
    if re.fullmatch(rf"(?i)skip_?if_?({words})", name):
        return True
    if isinstance(decorator, ast.Call) and name in SKIP_DECORATORS:
        conditions = decorator.args[:1] + [k.value for k in decorator.keywords if k.arg == "condition"]
        if not conditions:
            return False
        value = _value_on(conditions[0], amd)
        return value is True if "unless" not in name.lower() else value is False
    return False


def not_on_amd(node: ast.AST, parents: dict[int, ast.AST], facts: BlockFacts | None = None) -> str | None:
    """Why `node` never runs on an AMD machine (it sits on the NVIDIA side of a platform test,
    after an early exit taken on AMD, in a test skipped on AMD), or None: it may run there."""
    return _not_on(node, parents, facts, amd=True)


def not_on_nvidia(node: ast.AST, parents: dict[int, ast.AST], facts: BlockFacts | None = None) -> str | None:
    """Why `node` never runs on an NVIDIA machine (the AMD side of a platform test, after an
    early exit taken on NVIDIA, a test skipped on NVIDIA), or None: it may run there."""
    return _not_on(node, parents, facts, amd=False)


def _not_on(node: ast.AST, parents: dict[int, ast.AST], facts: BlockFacts | None, amd: bool) -> str | None:
    facts = facts if facts is not None else BlockFacts()
    stack = "AMD" if amd else "NVIDIA"
    child, parent = node, parents.get(id(node))
    while parent is not None:
        if isinstance(parent, (ast.If, ast.IfExp, ast.While)) and child is not parent.test:
            value = _value_on(parent.test, amd)
            in_body = facts.position(parent, "body", child) is not None or child is getattr(parent, "body", None)
            if (value is False and in_body) or (value is True and not in_body and not isinstance(parent, ast.While)):
                side = "" if in_body else "the `else` of "
                return f"on {side}`if {short_source(parent.test)}` (line {parent.lineno}), not taken on {stack}"
        elif isinstance(parent, ast.BoolOp) and child in parent.values and child is not parent.values[0]:
            earlier = [_value_on(v, amd) for v in parent.values[: parent.values.index(child)]]
            stop = False if isinstance(parent.op, ast.And) else True
            if stop in earlier:
                return f"after `{short_source(parent)}` (line {parent.lineno}) stops before it on {stack}"
        elif isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for decorator in parent.decorator_list:
                if _skips_on(decorator, amd):
                    return f"in `{parent.name}`, skipped on {stack} by `@{short_source(decorator)}` (line {decorator.lineno})"
        elif isinstance(parent, ast.Module):
            for statement in parent.body:
                if isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in statement.targets):
                    marks = statement.value.elts if isinstance(statement.value, (ast.List, ast.Tuple)) else [statement.value]
                    if any(_skips_on(mark, amd) for mark in marks):
                        return f"in a test module skipped on {stack} by `{short_source(statement)}` (line {statement.lineno})"
        for block in ("body", "orelse", "finalbody"):
            position = facts.position(parent, block, child)
            if position is None:
                continue
            for earlier in getattr(parent, block)[:position]:
                if isinstance(earlier, ast.If) and _exits(earlier.body) and _value_on(earlier.test, amd) is True:
                    return f"after `if {short_source(earlier.test)}:` exits on {stack} (line {earlier.lineno})"
        child, parent = parent, parents.get(id(parent))
    return None
