"""Read CMake build files without running CMake: which sources each vendor's build compiles.

`parse_cmake` turns a CMakeLists.txt or .cmake file into commands (the CMake language's own
grammar: command invocations with unquoted, quoted and bracket arguments, line and bracket
comments). `read_cmake` then walks the commands the way CMake would, once as the ROCm build
and once as the CUDA build (`rocmlint.build.worlds`), following:

- variables (`set`, `unset`, `option`, `list(APPEND/PREPEND/INSERT/REMOVE_ITEM/FILTER)`,
  `string(APPEND/REPLACE/TOLOWER/TOUPPER)`, `file(GLOB/GLOB_RECURSE)`) with every value they
  may hold, so `if(VLLM_GPU_LANG STREQUAL "CUDA")` is known to be false in the ROCm build
  once the file has set `VLLM_GPU_LANG` to "HIP" there;
- `if`/`elseif`/`else` with CMake's condition grammar in three-valued logic: a condition that
  cannot be known from the files runs both branches, whose variables are then joined;
- `include()`, `add_subdirectory()`, `function`/`macro` definitions and their calls
  (including `cmake_parse_arguments`), `foreach`, `return()`.

A source is compiled by a build when it reaches, in that build, a command that compiles what
it is given: `add_library`, `add_executable`, `target_sources`, and any command the project
does not define (`cuda_add_library`, `Python_add_library`, ...). A call of a function the
project defines counts too, and its body is walked as well. Macros come from `-DNAME` in any
argument, `add_compile_definitions`, `add_definitions` and `target_compile_definitions`.
Nothing is executed: `execute_process`, `find_package` and generator expressions are unknown.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
from dataclasses import dataclass
from typing import Iterable

from rocmlint.build import BuildFacts, Item, Origin, is_source_path
from rocmlint.build.budget import MAX_DEPTH, MAX_LIST_ELEMENTS, MAX_LOOP_ELEMENTS, MAX_VALUE_CHARACTERS, WorkBudget, too_long
from rocmlint.build.worlds import CUDA, ROCM, selects, switch_in_world
from rocmlint.files.tree import glob_within, is_within

# --- the language ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Argument:
    text: str
    kind: str  # "unquoted", "quoted" or "bracket"
    line: int
    # Where the argument is written: offsets into the file text, quotes and brackets included.
    start: int = -1
    end: int = -1


@dataclass(frozen=True)
class Command:
    name: str  # lower case: CMake command names are case-insensitive
    arguments: tuple[Argument, ...]
    line: int
    start: int = -1  # offset of the command name in the file text
    end: int = -1  # offset just after its closing parenthesis


class CMakeSyntaxError(ValueError):
    pass


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BRACKET_OPEN = re.compile(r"\[(=*)\[")


def parse_cmake(text: str) -> list[Command]:
    """The command invocations of a CMake file, in order."""
    commands: list[Command] = []
    i, n, line = 0, len(text), 1
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
            i += 1
        elif ch in " \t\r":
            i += 1
        elif ch == "#":
            i, line = _skip_comment(text, i, line)
        else:
            match = _IDENTIFIER.match(text, i)
            if not match:
                # Not a command: skip to the end of the line rather than give up on the file.
                end = text.find("\n", i)
                i = n if end < 0 else end
                continue
            name = match.group(0).lower()
            start_line = line
            j = match.end()
            while j < n and text[j] in " \t":
                j += 1
            if j >= n or text[j] != "(":
                end = text.find("\n", j)
                i = n if end < 0 else end
                continue
            arguments, i, line = _arguments(text, j + 1, line)
            commands.append(Command(name, tuple(arguments), start_line, match.start(), i))
    return commands


def _skip_comment(text: str, i: int, line: int) -> tuple[int, int]:
    bracket = _BRACKET_OPEN.match(text, i + 1)
    if bracket:
        close = "]" + bracket.group(1) + "]"
        end = text.find(close, bracket.end())
        end = len(text) if end < 0 else end + len(close)
        return end, line + text.count("\n", i, end)
    end = text.find("\n", i)
    return (len(text) if end < 0 else end), line


def _arguments(text: str, i: int, line: int) -> tuple[list[Argument], int, int]:
    """Arguments up to the matching ')'. Nested parentheses become "(" and ")" arguments."""
    arguments: list[Argument] = []
    depth = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
            i += 1
        elif ch in " \t\r":
            i += 1
        elif ch == "#":
            i, line = _skip_comment(text, i, line)
        elif ch == "(":
            depth += 1
            arguments.append(Argument("(", "unquoted", line, i, i + 1))
            i += 1
        elif ch == ")":
            if depth == 0:
                return arguments, i + 1, line
            depth -= 1
            arguments.append(Argument(")", "unquoted", line, i, i + 1))
            i += 1
        elif ch == '"':
            start_line = line
            j = i + 1
            parts = []
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n:
                    following = text[j + 1]
                    if following == "\n":  # line continuation
                        line += 1
                    else:
                        parts.append({"n": "\n", "t": "\t", "r": "\r", ";": "\\;"}.get(following, following))
                    j += 2
                    continue
                if text[j] == "\n":
                    line += 1
                parts.append(text[j])
                j += 1
            arguments.append(Argument("".join(parts), "quoted", start_line, i, min(n, j + 1)))
            i = j + 1
        elif ch == "[" and _BRACKET_OPEN.match(text, i):
            bracket = _BRACKET_OPEN.match(text, i)
            close = "]" + bracket.group(1) + "]"
            end = text.find(close, bracket.end())
            end = n if end < 0 else end
            body = text[bracket.end() : end]
            if body.startswith("\n"):
                body = body[1:]
            arguments.append(Argument(body, "bracket", line, i, min(n, end + len(close))))
            line += text.count("\n", i, end)
            i = min(n, end + len(close))
        else:
            start = i
            j = i
            while j < n:
                c = text[j]
                if c in " \t\r\n()#":
                    break
                if c == "\\" and j + 1 < n:
                    j += 2
                    continue
                if c == '"':  # legacy unquoted arguments may hold quoted parts: a"b c"d
                    close = text.find('"', j + 1)
                    j = n if close < 0 else close + 1
                    continue
                if c == "$" and text.startswith("{", j + 1):
                    close = _matching_brace(text, j + 1)
                    j = close + 1 if close > 0 else j + 1
                    continue
                j += 1
            raw = text[start:j]
            line += raw.count("\n")
            arguments.append(Argument(raw, "unquoted", line - raw.count("\n"), start, j))
            i = j
    return arguments, i, line


def _matching_brace(text: str, open_index: int) -> int:
    depth = 0
    for k in range(open_index, min(len(text), open_index + 4096)):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
            if depth == 0:
                return k
        elif text[k] == "\n":
            return -1
    return -1


# --- values ---------------------------------------------------------------------------------

# The most different values one variable may hold before it is called unknown. Real files
# need few; the cap keeps a long chain of unknown conditions from growing without bound.
_MAX_OPTIONS = 8


@dataclass(frozen=True)
class Value:
    # The exact strings the variable may hold, or None when one of them is unknown.
    options: frozenset[str] | None
    # Every list element any of those strings may hold, in order, with where it was written:
    # kept even when `options` is unknown, so a source list is never lost to a cap.
    items: tuple[Item, ...] = ()

    @staticmethod
    def known(text: str, items: tuple[Item, ...] = ()) -> "Value":
        return Value(frozenset({text}), items)


UNKNOWN = Value(None)


def _join_values(a: Value | None, b: Value | None) -> Value:
    """The value after two branches: everything either may hold. None means unset."""
    if a is None and b is None:
        return UNKNOWN
    if a is None or b is None:
        present = a or b
        return Value(None, present.items)
    options = None
    if a.options is not None and b.options is not None:
        options = a.options | b.options
        if len(options) > _MAX_OPTIONS:
            options = None
    return Value(options, _union_items(a.items, b.items))


def _union_items(a: tuple[Item, ...], b: tuple[Item, ...]) -> tuple[Item, ...]:
    if not b:
        return a
    if not a:
        return b
    seen = set(a)
    merged = list(a)
    for item in b:
        if item not in seen and len(merged) < MAX_LIST_ELEMENTS:
            seen.add(item)
            merged.append(item)
    return tuple(merged)


def _split_list(text: str) -> list[str]:
    """A CMake list's elements (`a;b;;c` -> a, b, c; `\\;` stays inside an element)."""
    if "\\" not in text:
        return [p for p in text.split(";") if p]
    parts, current, i = [], [], 0
    while i < len(text):
        if text[i] == "\\" and text.startswith(";", i + 1):
            current.append(";")
            i += 2
            continue
        if text[i] == ";":
            parts.append("".join(current))
            current = []
        else:
            current.append(text[i])
        i += 1
    parts.append("".join(current))
    return [p for p in parts if p != ""]


# --- conditions -----------------------------------------------------------------------------

_TRUE_WORDS = {"1", "on", "yes", "true", "y"}
_FALSE_WORDS = {"0", "off", "no", "false", "n", "ignore", "notfound", ""}
_UNARY_TESTS = {"EXISTS", "COMMAND", "DEFINED", "TARGET", "POLICY", "TEST", "IS_DIRECTORY", "IS_SYMLINK",
                "IS_ABSOLUTE", "IS_READABLE", "IS_WRITABLE", "IS_EXECUTABLE"}
_BINARY_TESTS = {"STREQUAL", "EQUAL", "LESS", "GREATER", "LESS_EQUAL", "GREATER_EQUAL", "STRLESS", "STRGREATER",
                 "STRLESS_EQUAL", "STRGREATER_EQUAL", "VERSION_EQUAL", "VERSION_LESS", "VERSION_GREATER",
                 "VERSION_LESS_EQUAL", "VERSION_GREATER_EQUAL", "MATCHES", "IN_LIST", "IS_NEWER_THAN", "PATH_EQUAL"}


def _constant_truth(text: str) -> bool | None:
    lower = text.lower()
    if lower in _TRUE_WORDS:
        return True
    if lower in _FALSE_WORDS or lower.endswith("-notfound"):
        return False
    try:
        return float(text) != 0
    except ValueError:
        return None


def _not(value: bool | None) -> bool | None:
    return None if value is None else not value


def _and(a: bool | None, b: bool | None) -> bool | None:
    if a is False or b is False:
        return False
    if a is True and b is True:
        return True
    return None


def _or(a: bool | None, b: bool | None) -> bool | None:
    if a is True or b is True:
        return True
    if a is False and b is False:
        return False
    return None


def _version_key(text: str) -> tuple[int, ...] | None:
    parts = re.findall(r"\d+", text.split("-")[0])
    return tuple(int(p) for p in parts[:4]) if parts else None


@dataclass(frozen=True)
class _Operand:
    """An if() operand after `${}` expansion."""

    texts: frozenset[str] | None  # the strings it may be; None: unknown
    word: str | None  # the unquoted word as written, when it may name a variable
    quoted: bool


# --- the walk -------------------------------------------------------------------------------

# Commands whose arguments are never sources that get compiled.
_NOT_COMPILING = {
    "set", "unset", "list", "file", "string", "math", "message", "option", "include", "add_subdirectory",
    "set_property", "get_property", "set_source_files_properties", "get_source_file_property",
    "set_target_properties", "get_target_property", "set_directory_properties", "install", "configure_file",
    "find_package", "find_library", "find_path", "find_program", "find_file", "target_link_libraries",
    "target_include_directories", "target_compile_options", "target_compile_definitions",
    "target_compile_features", "target_link_options", "target_link_directories", "target_precompile_headers",
    "include_directories", "link_directories", "link_libraries", "add_compile_options", "add_compile_definitions",
    "add_definitions", "add_link_options", "add_custom_target", "add_custom_command", "add_dependencies",
    "get_filename_component", "cmake_path", "project", "enable_language", "execute_process", "mark_as_advanced",
    "source_group", "export", "return", "break", "continue", "separate_arguments", "cmake_minimum_required",
    "cmake_policy", "cmake_parse_arguments", "include_guard", "enable_testing", "add_test", "set_tests_properties",
    "check_language", "check_cxx_compiler_flag", "check_c_compiler_flag", "check_include_file",
    "check_include_file_cxx", "check_symbol_exists", "check_cxx_source_compiles", "try_compile", "try_run",
    "fetchcontent_declare", "fetchcontent_makeavailable", "fetchcontent_populate", "fetchcontent_getproperties",
    "externalproject_add", "get_directory_property", "define_property", "variable_watch", "site_name",
    "build_command", "create_test_sourcelist", "aux_source_directory", "load_cache", "cmake_host_system_information",
    "cmake_language", "block", "endblock", "write_basic_package_version_file", "configure_package_config_file",
    "add_library_alias", "qt_add_resources", "find_dependency", "pkg_check_modules", "pkg_search_module",
}
_COMPILING = {"add_library", "add_executable", "target_sources"}
_DEFINITION_COMMANDS = {"add_compile_definitions", "target_compile_definitions"}
# Commands whose arguments are compiler flags, where `${FLAGS}` may hold -D options.
_FLAG_COMMANDS = {"add_definitions", "add_compile_options", "target_compile_options", "set_source_files_properties",
                  "set_target_properties", "set_property"}
_DASH_D = re.compile(r"(?:^|\s)-D\s*([A-Za-z_][A-Za-z0-9_]*)(?:=(\S*))?")
# A variable that only the configure step can know names a directory under the build tree.
_BINARY_DIR_VARIABLES = {"CMAKE_BINARY_DIR", "CMAKE_CURRENT_BINARY_DIR", "PROJECT_BINARY_DIR"}
_GENERATED = "\0generated"
# string(<action> ...): the position of the output variable.
_STRING_OUTPUT = {"LENGTH": 2, "STRIP": 2, "FIND": 3, "SUBSTRING": 4, "COMPARE": 4, "CONCAT": 1, "JOIN": 2,
                  "MD5": 1, "SHA1": 1, "SHA256": 1, "TIMESTAMP": 1, "MAKE_C_IDENTIFIER": 2, "GENEX_STRIP": 2,
                  "REPEAT": 3, "CONFIGURE": 2, "JSON": 1, "UUID": 1, "RANDOM": -1}


class _Variables(dict):
    """A scope's variables, remembering which names were written since the scope was copied,
    so that joining the branches of an if() looks only at what the branches changed."""

    def __init__(self, *args):
        super().__init__(*args)
        self.changed: set[str] = set()

    def __setitem__(self, name, value):
        self.changed.add(name)
        super().__setitem__(name, value)

    def pop(self, name, *default):
        self.changed.add(name)
        return super().pop(name, *default)


@dataclass
class _Scope:
    variables: _Variables
    source_dir: str  # absolute
    list_dir: str  # absolute directory of the file being read
    list_file: str
    returned: bool = False  # return() ran on every path so far: stop reading this file/function
    parent: dict | None = None  # the variables PARENT_SCOPE writes to

    def copy(self) -> "_Scope":
        return _Scope(_Variables(self.variables), self.source_dir, self.list_dir, self.list_file, self.returned, self.parent)


@dataclass
class _Definition:
    name: str
    parameters: tuple[str, ...]
    body: tuple
    is_macro: bool
    file: str


@dataclass
class _If:
    branches: list[tuple[tuple[Argument, ...] | None, list, int]]  # (condition or None for else, body, line)


@dataclass
class _Loop:
    command: Command
    body: list


@dataclass
class _Def:
    command: Command
    body: list
    is_macro: bool


def _structure(commands: list[Command]) -> list:
    """Nest if/foreach/while/function/macro blocks; unbalanced blocks close at end of file."""
    root: list = []
    stack: list[tuple[object, list]] = []
    current = root
    for command in commands:
        name = command.name
        if name == "if":
            block = _If([(command.arguments, [], command.line)])
            current.append(block)
            stack.append((block, current))
            current = block.branches[-1][1]
        elif name in ("elseif", "else") and stack and isinstance(stack[-1][0], _If):
            block = stack[-1][0]
            block.branches.append((command.arguments if name == "elseif" else None, [], command.line))
            current = block.branches[-1][1]
        elif name == "endif" and stack and isinstance(stack[-1][0], _If):
            _, current = stack.pop()
        elif name in ("foreach", "while"):
            block = _Loop(command, [])
            current.append(block)
            stack.append((block, current))
            current = block.body
        elif name in ("endforeach", "endwhile") and stack and isinstance(stack[-1][0], _Loop):
            _, current = stack.pop()
        elif name in ("function", "macro"):
            block = _Def(command, [], name == "macro")
            current.append(block)
            stack.append((block, current))
            current = block.body
        elif name in ("endfunction", "endmacro") and stack and isinstance(stack[-1][0], _Def):
            _, current = stack.pop()
        else:
            current.append(command)
    return root


class CMakeReader:
    """Walks a project's CMake files as one vendor's build."""

    def __init__(
        self, root: str, world: str, facts: BuildFacts, read_file, parsed: dict | None = None, budget: WorkBudget | None = None
    ):
        self.root = root  # the project root, absolute
        self.world = world
        self.facts = facts
        self.read_file = read_file  # path -> text or None
        self.functions: dict[str, _Definition] = {}
        self.parsed: dict[str, list] = parsed if parsed is not None else {}  # shared by both builds
        self.depth = 0
        self.budget = budget if budget is not None else WorkBudget()
        self.including: list[str] = []  # the files being read, outermost first
        self.guarded: set[tuple] = set()  # files that ran include_guard(), with their scope
        self.conditions: list[tuple[str, int]] = []  # innermost last: (condition text, line)
        self.relative_paths: dict[str, str] = {}
        self.hipify_origin: Origin | None = None  # where the ROCm build calls a hipify step
        self.body_files: list[str] = []  # files of the function bodies being run, innermost last

    # --- files ----------------------------------------------------------------------------

    def _relative(self, path: str) -> str:
        relative = self.relative_paths.get(path)
        if relative is None:
            try:
                relative = os.path.relpath(path, self.root).replace(os.sep, "/")
            except ValueError:
                relative = path
            self.relative_paths[path] = relative
        return relative

    def _structured(self, path: str) -> list | None:
        if path not in self.parsed:
            text = self.read_file(path)
            if text is None:
                self.parsed[path] = None
            else:
                self.parsed[path] = _structure(parse_cmake(text))
                if path not in self.facts.files_read:
                    self.facts.files_read.append(path)
        return self.parsed[path]

    def run_file(self, path: str, scope: _Scope) -> None:
        body = self._structured(path)
        if body is None:
            return
        # One file may be included any number of times (the budget bounds the work), but not
        # nested without end: an include cycle, or a file that includes itself.
        if self.depth > MAX_DEPTH:
            how = "an include cycle through" if path in self.including else "includes nested too deep at"
            self.budget.limit(f"{how} {self._relative(path)} (more than {MAX_DEPTH} deep)")
            return
        saved = scope.list_dir, scope.list_file
        scope.list_dir, scope.list_file = os.path.dirname(path), path
        self.depth += 1
        self.including.append(path)
        try:
            self._run(body, scope)
        finally:
            self.depth -= 1
            self.including.pop()
            scope.list_dir, scope.list_file = saved
        scope.returned = False

    def new_scope(self, source_dir: str) -> _Scope:
        scope = _Scope(_Variables(), source_dir, source_dir, os.path.join(source_dir, "CMakeLists.txt"))
        for name in ("CMAKE_SOURCE_DIR", "PROJECT_SOURCE_DIR", "CMAKE_CURRENT_SOURCE_DIR"):
            scope.variables[name] = Value.known(source_dir)
        return scope

    # --- statements ------------------------------------------------------------------------

    def _run(self, body: list, scope: _Scope) -> None:
        for statement in body:
            if scope.returned:
                return
            self.budget.spend()
            if isinstance(statement, _If):
                self._if(statement, scope)
            elif isinstance(statement, _Loop):
                self._loop(statement, scope)
            elif isinstance(statement, _Def):
                self._define_function(statement, scope)
            else:
                self._command(statement, scope)

    def _origin(self, scope: _Scope, line: int) -> Origin:
        condition, condition_line = self.conditions[-1] if self.conditions else (None, None)
        return Origin(self._relative(scope.list_file), line, condition, condition_line)

    def _if(self, block: _If, scope: _Scope) -> None:
        outcomes: list[_Scope] = []
        earlier_possible = True  # could every earlier branch have been false?
        negations: list[str] = []
        for condition, body, line in block.branches:
            if not earlier_possible:
                break
            if condition is None:
                value: bool | None = True
                text = "else of " + " / ".join(negations) if negations else "else"
            else:
                value = self.condition(condition, scope)
                text = "if(" + _condition_text(condition) + ")"
            if value is False:
                negations.append(text)
                continue
            branch_scope = scope.copy()
            self.conditions.append((text, line))
            try:
                self._run(body, branch_scope)
            finally:
                self.conditions.pop()
            outcomes.append(branch_scope)
            negations.append(text)
            if value is True:
                earlier_possible = False
        if earlier_possible:
            outcomes.append(scope.copy())  # no branch taken
        self._join_into(scope, outcomes)

    def _join_into(self, scope: _Scope, outcomes: list[_Scope]) -> None:
        """Make `scope` hold, for every variable a branch changed, what any branch left in it."""
        if not outcomes:
            return
        changed = set().union(*(o.variables.changed for o in outcomes))
        for name in changed:
            values = [o.variables.get(name) for o in outcomes]
            merged = values[0]
            for other in values[1:]:
                if other is not merged:
                    merged = _join_values(merged, other)
            if merged is None:
                if name in scope.variables:
                    scope.variables.pop(name)
            else:
                if len(merged.items) >= MAX_LIST_ELEMENTS:
                    self._kept_items(merged.items, scope)  # says that the walk is cut
                scope.variables[name] = merged
        scope.returned = all(o.returned for o in outcomes)

    def _loop(self, block: _Loop, scope: _Scope) -> None:
        command = block.command
        if command.name == "while" or not command.arguments:
            # Run the body once, joined with not running it.
            after = scope.copy()
            self._run(block.body, after)
            self._join_into(scope, [scope.copy(), after])
            return
        variable = self._expand_text(command.arguments[0].text, scope)
        if variable is None:
            return
        loop_items, exact = self._foreach_items(command.arguments[1:], scope, command.line)
        if exact and len(loop_items) > MAX_LOOP_ELEMENTS:
            self.budget.limit(f"a foreach() over {len(loop_items):,} elements at {self._relative(scope.list_file)}:{command.line}")
        if exact and len(loop_items) <= MAX_LOOP_ELEMENTS:
            for item in loop_items:
                scope.variables[variable] = Value.known(item.text, (item,))
                self._run(block.body, scope)
                if scope.returned:
                    return
            return
        # Too many or unknown elements: one pass with the variable holding any of them.
        after = scope.copy()
        after.variables[variable] = Value(None, tuple(loop_items))
        self._run(block.body, after)
        self._join_into(scope, [scope.copy(), after])

    def _foreach_items(self, arguments: tuple[Argument, ...], scope: _Scope, line: int) -> tuple[list[Item], bool]:
        """The elements a foreach walks, and whether exactly those (False: unknown or partial)."""
        words = [a.text for a in arguments]
        if words[:1] == ["RANGE"]:
            numbers = [self._expand_text(w, scope) for w in words[1:]]
            try:
                values = [int(x) for x in numbers if x is not None]
            except ValueError:
                return [], False
            if len(values) != len(numbers) or not values:
                return [], False
            start, stop = (0, values[0]) if len(values) == 1 else (values[0], values[1])
            step = values[2] if len(values) > 2 else 1
            if step <= 0:
                return [], False
            if (stop - start) // step > MAX_LOOP_ELEMENTS:
                self.budget.limit(f"a foreach(RANGE) over more than {MAX_LOOP_ELEMENTS:,} numbers at {self._relative(scope.list_file)}:{line}")
                return [], False
            origin = self._origin(scope, line)
            return [Item(str(v), origin) for v in range(start, stop + 1, step)], True
        items: list[Item] = []
        exact = True
        mode = "ITEMS"
        for index, argument in enumerate(arguments):
            if index == 0 and argument.kind == "unquoted" and argument.text == "IN":
                continue
            if words[:1] == ["IN"] and argument.kind == "unquoted" and argument.text in ("LISTS", "ITEMS", "ZIP_LISTS"):
                mode = argument.text
                continue
            if mode == "ITEMS":
                value = self._expand_argument(argument, scope)
            else:
                name = self._expand_text(argument.text, scope)
                value = scope.variables.get(name) if name else None
                if value is None:
                    continue  # an unset list is empty
                if value.options is not None and len(value.options) == 1:
                    items.extend(self._items_of_known(value))
                    continue
            if value.options is None or len(value.options) != 1:
                exact = False
            items.extend(value.items)
        return items, exact

    @staticmethod
    def _items_of_known(value: Value) -> list[Item]:
        (text,) = value.options
        by_text = {}
        for item in value.items:
            by_text.setdefault(item.text, item)
        origin = value.items[0].origin if value.items else Origin("", 0)
        return [by_text.get(part, Item(part, origin)) for part in _split_list(text)]

    def _define_function(self, block: _Def, scope: _Scope) -> None:
        arguments = block.command.arguments
        if not arguments:
            return
        name = arguments[0].text.lower()
        parameters = tuple(a.text for a in arguments[1:])
        self.functions[name] = _Definition(name, parameters, tuple(block.body), block.is_macro, scope.list_file)

    # --- commands --------------------------------------------------------------------------

    def _command(self, command: Command, scope: _Scope) -> None:
        where = self.body_files[-1] if self.body_files else scope.list_file
        self.facts.reach(self.world, (where, command.line), self.conditions)
        name = command.name
        if self.world == ROCM and "hipify" in name and self.hipify_origin is None:
            self.hipify_origin = self._origin(scope, command.line)
        handler = getattr(self, "_cmd_" + name, None)
        if name in self.functions:
            self._call(self.functions[name], command, scope)
            return
        if name == "return":
            scope.returned = True
            return
        self._record_defines(command, scope)
        if handler is not None:
            handler(command, scope)
        elif name in _COMPILING or name not in _NOT_COMPILING:
            self._compile_arguments(command.arguments, scope)

    def _compile_arguments(self, arguments: Iterable[Argument], scope: _Scope) -> None:
        for argument in arguments:
            value = self._expand_argument(argument, scope)
            for item in value.items:
                self._compile_item(item, scope)

    def _compile_item(self, item: Item, scope: _Scope) -> None:
        text = item.text
        if not text or text.startswith("$<") or _GENERATED in text or not is_source_path(text):
            return
        path = text if os.path.isabs(text) else os.path.join(scope.source_dir, text)
        path = os.path.normpath(path)
        if not is_within(path, self.root) or path in self.facts.compiled[self.world]:
            return
        if os.path.isfile(path):  # `llama.cpp` may well be a directory
            self.facts.compile(self.world, path, item.origin)

    def _record_defines(self, command: Command, scope: _Scope) -> None:
        if command.name not in _DEFINITION_COMMANDS and command.name not in _FLAG_COMMANDS and not any(
            "-D" in a.text for a in command.arguments
        ):
            return
        definitions: list[tuple[str, str | None]] = []
        values = [self._expand_argument(a, scope) for a in command.arguments]
        texts = [item.text for value in values for item in value.items]
        if command.name in _DEFINITION_COMMANDS:
            skip = {"PRIVATE", "PUBLIC", "INTERFACE"}
            start = 1 if command.name == "target_compile_definitions" else 0
            for text in texts[start:]:
                if text in skip or text.startswith("$<"):
                    continue
                text = text[2:] if text.startswith("-D") else text
                name, _, raw_value = text.partition("=")
                if _IDENTIFIER.fullmatch(name):
                    definitions.append((name, raw_value if "=" in text else None))
        else:
            for text in texts:
                if "-D" in text:
                    definitions.extend((m.group(1), m.group(2)) for m in _DASH_D.finditer(text))
        for name, value in definitions:
            self.facts.define(self.world, name, value, self._origin(scope, command.line))

    def _call(self, definition: _Definition, command: Command, scope: _Scope) -> None:
        values = [self._expand_argument(a, scope) for a in command.arguments]
        # A function the project defines compiles what it is handed in nearly every real
        # build (`define_extension_target(... SOURCES ${SRC})`): count its arguments, and walk
        # its body for the variables and targets it sets.
        for value in values:
            for item in value.items:
                self._compile_item(item, scope)
        if self.depth > MAX_DEPTH:
            self.budget.limit(f"calls of {definition.name}() nested more than {MAX_DEPTH} deep")
            return
        flat: list[Item] = [item for value in values for item in value.items]
        target = scope if definition.is_macro else scope.copy()
        saved = {}
        bound: dict[str, Value] = {}
        for index, parameter in enumerate(definition.parameters):
            bound[parameter] = Value.known(flat[index].text, (flat[index],)) if index < len(flat) else Value.known("")
        extra = flat[len(definition.parameters) :]
        if all(v.options is not None for v in values):
            bound["ARGN"] = Value.known(";".join(i.text for i in extra), tuple(extra))
            bound["ARGV"] = Value.known(";".join(i.text for i in flat), tuple(flat))
        else:
            bound["ARGN"] = Value(None, tuple(extra))
            bound["ARGV"] = Value(None, tuple(flat))
        bound["ARGC"] = Value.known(str(len(flat)))
        for index, item in enumerate(flat[:32]):
            bound[f"ARGV{index}"] = Value.known(item.text, (item,))
        for name, value in bound.items():
            if definition.is_macro:
                saved[name] = target.variables.get(name)
            target.variables[name] = value
        if not definition.is_macro:
            target.parent = scope.variables
        saved_file = target.list_file
        target.list_file = definition.file  # origins inside name the file that defines it
        self.depth += 1
        self.body_files.append(definition.file)
        try:
            self._run(list(definition.body), target)
        finally:
            self.depth -= 1
            target.list_file = saved_file
            self.body_files.pop()
        target.returned = False
        if definition.is_macro:
            for name, old in saved.items():
                if old is None:
                    target.variables.pop(name, None)
                else:
                    target.variables[name] = old

    # --- expansion -------------------------------------------------------------------------

    def _variable(self, name: str, scope: _Scope) -> Value | None:
        """A variable's value as a `${}` reference reads it; None when unset and unknowable."""
        value = scope.variables.get(name)
        if value is not None:
            return value
        if name == "CMAKE_CURRENT_LIST_DIR":
            return Value.known(scope.list_dir)
        if name == "CMAKE_CURRENT_LIST_FILE":
            return Value.known(scope.list_file)
        if name in _BINARY_DIR_VARIABLES:
            return Value.known(_GENERATED)
        if switch_in_world(name, self.world) is False:
            # The ROCm build has no CUDA toolkit, version or flags (and the CUDA build no HIP).
            return Value.known("")
        return None

    def _expand_text(self, text: str, scope: _Scope) -> str | None:
        """A string with `${}` references replaced; None when any is unknown or ambiguous."""
        options = self._expand_options(text, scope)
        if options is None or len(options) != 1:
            return None
        return next(iter(options))

    def _expand_options(self, text: str, scope: _Scope, depth: int = 0) -> frozenset[str] | None:
        if "$" not in text:
            return frozenset({text})
        if depth > 8:
            return None
        results = [""]
        i = 0
        while i < len(text):
            start = text.find("$", i)
            if start < 0:
                results = [r + text[i:] for r in results]
                break
            results = [r + text[i:start] for r in results]
            brace = text.find("{", start)
            prefix = text[start + 1 : brace] if brace > start else None
            if prefix not in ("", "ENV", "CACHE") or brace < 0:
                results = [r + "$" for r in results]
                i = start + 1
                continue
            close = _matching_brace(text, brace)
            if close < 0:
                results = [r + text[start:] for r in results]
                break
            inner = text[brace + 1 : close]
            names = self._expand_options(inner, scope, depth + 1)
            if names is None or prefix == "ENV":
                return None
            replacements: set[str] = set()
            for name in names:
                value = self._variable(name, scope)
                if value is None:
                    if prefix == "CACHE":
                        return None
                    return None
                if value.options is None:
                    return None
                replacements.update(value.options)
            results = [r + rep for r in results for rep in replacements]
            if len(results) > _MAX_OPTIONS:
                return None
            if any(too_long(r) for r in results):
                self._value_too_long(scope)
                return None
            i = close + 1
        return frozenset(results)

    def _value_too_long(self, scope: _Scope) -> None:
        self.budget.limit(f"a value longer than {MAX_VALUE_CHARACTERS:,} characters in {self._relative(scope.list_file)}")

    def _kept_items(self, items: tuple[Item, ...], scope: _Scope) -> tuple[Item, ...]:
        """A list value's elements, at most MAX_LIST_ELEMENTS of them (more: the walk is cut)."""
        if len(items) >= MAX_LIST_ELEMENTS:
            self.budget.limit(f"a list of more than {MAX_LIST_ELEMENTS:,} elements in {self._relative(scope.list_file)}")
            return items[:MAX_LIST_ELEMENTS]
        return items

    def _expand_argument(self, argument: Argument, scope: _Scope) -> Value:
        """An argument's value: its possible strings, and its list elements with their origins.

        An unquoted argument that is exactly one `${VAR}` keeps VAR's elements with the places
        they were written, so a source keeps the line that listed it through any number of
        variables.
        """
        self.budget.spend()
        text = argument.text
        if argument.kind == "bracket":
            return Value.known(text, (Item(text, self._origin(scope, argument.line)),))
        # `${SRCS}` and `"${SRCS}"` hand on the same list (quoted, as one argument whose
        # elements list commands still see).
        reference = re.fullmatch(r"\$\{([A-Za-z0-9_.+\-/]+)\}", text)
        if reference:
            value = self._variable(reference.group(1), scope)
            if value is None:
                return UNKNOWN
            if value.options is not None and not value.items:
                origin = self._origin(scope, argument.line)
                parts = [Item(p, origin) for option in value.options for p in _split_list(option)]
                return Value(value.options, tuple(parts))
            return value
        options = self._expand_options(text, scope)
        origin = self._origin(scope, argument.line)
        if options is None:
            # `${FETCHED_SOURCE_DIR}/csrc/a.cu`: a directory only the configure step knows,
            # usually outside the tree (FetchContent); its tail is not matched by guesswork.
            return UNKNOWN
        items: list[Item] = []
        for option in options:
            items.extend(Item(p, origin) for p in _split_list(option))
        return Value(options, tuple(dict.fromkeys(items)))

    def _expanded_list(self, arguments: Iterable[Argument], scope: _Scope) -> tuple[list[str] | None, tuple[Item, ...]]:
        """Arguments as one CMake list: exact elements (None if unknown) and elements seen."""
        texts: list[str] | None = []
        items: tuple[Item, ...] = ()
        length = 0
        for argument in arguments:
            value = self._expand_argument(argument, scope)
            items = self._kept_items(_union_items(items, value.items), scope)
            if texts is not None:
                if value.options is None or len(value.options) != 1:
                    texts = None
                else:
                    option = next(iter(value.options))
                    length += len(option) + 1
                    if length > MAX_VALUE_CHARACTERS:
                        self._value_too_long(scope)
                        texts = None
                    else:
                        texts.extend([option] if argument.kind != "unquoted" else _split_list(option))
        return texts, items

    # --- conditions ------------------------------------------------------------------------

    def condition(self, arguments: tuple[Argument, ...], scope: _Scope) -> bool | None:
        tokens: list[tuple[str, Argument]] = []
        for argument in arguments:
            tokens.append((argument.text, argument))
        try:
            value, position = self._or_expression(tokens, 0, scope)
        except (IndexError, ValueError, re.error, RecursionError):
            return None
        return value if position == len(tokens) else None

    def _or_expression(self, tokens, i, scope):
        left, i = self._and_expression(tokens, i, scope)
        while i < len(tokens) and tokens[i][1].kind == "unquoted" and tokens[i][0] == "OR":
            right, i = self._and_expression(tokens, i + 1, scope)
            left = _or(left, right)
        return left, i

    def _and_expression(self, tokens, i, scope):
        left, i = self._not_expression(tokens, i, scope)
        while i < len(tokens) and tokens[i][1].kind == "unquoted" and tokens[i][0] == "AND":
            right, i = self._not_expression(tokens, i + 1, scope)
            left = _and(left, right)
        return left, i

    def _not_expression(self, tokens, i, scope):
        if tokens[i][1].kind == "unquoted" and tokens[i][0] == "NOT":
            value, i = self._not_expression(tokens, i + 1, scope)
            return _not(value), i
        return self._test(tokens, i, scope)

    def _test(self, tokens, i, scope):
        text, argument = tokens[i]
        if argument.kind == "unquoted" and text == "(":
            value, i = self._or_expression(tokens, i + 1, scope)
            if i >= len(tokens) or tokens[i][0] != ")":
                raise ValueError("unbalanced parentheses")
            return value, i + 1
        if argument.kind == "unquoted" and text in _UNARY_TESTS and i + 1 < len(tokens):
            return self._unary(text, tokens[i + 1][1], scope), i + 2
        if i + 2 < len(tokens):
            op_text, op_argument = tokens[i + 1]
            if op_argument.kind == "unquoted" and op_text in _BINARY_TESTS:
                left = self._operand(argument, scope, left_side=True)
                right = self._operand(tokens[i + 2][1], scope, left_side=False)
                return self._binary(op_text, left, right), i + 3
        return self._truth(argument, scope), i + 1

    def _unary(self, test: str, argument: Argument, scope: _Scope) -> bool | None:
        if test == "DEFINED":
            name = self._expand_text(argument.text, scope)
            if name is None:
                return None
            if name.startswith("ENV{"):
                return switch_in_world(name[4:-1], self.world)
            if name in scope.variables:
                return True
            return switch_in_world(name, self.world)
        if test == "COMMAND":
            name = self._expand_text(argument.text, scope)
            if name and name.lower() in self.functions:
                return True
            return None
        return None

    def _operand(self, argument: Argument, scope: _Scope, left_side: bool) -> _Operand:
        if argument.kind == "bracket":
            return _Operand(frozenset({argument.text}), None, True)
        expanded = self._expand_options(argument.text, scope)
        if argument.kind == "quoted":
            return _Operand(expanded, None, True)
        if expanded is None:
            return _Operand(None, None, False)
        if len(expanded) == 1:
            word = next(iter(expanded))
            if _IDENTIFIER.fullmatch(word):
                value = scope.variables.get(word)
                if value is not None:
                    return _Operand(value.options, word, False)
                if left_side:
                    # An unset variable on the left is set by the user (-D) or the environment.
                    switch = switch_in_world(word, self.world)
                    if switch is not None:
                        return _Operand(frozenset({"ON" if switch else ""}), word, False)
                    return _Operand(None, word, False)
        return _Operand(expanded, None, False)

    def _binary(self, op: str, left: _Operand, right: _Operand) -> bool | None:
        if op == "IN_LIST" or op == "IS_NEWER_THAN" or op == "PATH_EQUAL":
            return None
        if op in ("STREQUAL", "EQUAL") and (left.texts is None or right.texts is None):
            known = right if left.texts is None else left
            if known.texts is not None and (left.texts is None) != (right.texts is None):
                answers = {selects(text, self.world) for text in known.texts}
                if len(answers) == 1:
                    return next(iter(answers))
            return None
        if left.texts is None or right.texts is None:
            return None
        answers = set()
        for a in left.texts:
            for b in right.texts:
                answers.add(self._compare(op, a, b))
                if len(answers) > 1:
                    return None
        return next(iter(answers)) if answers else None

    @staticmethod
    def _compare(op: str, a: str, b: str) -> bool | None:
        if op == "STREQUAL":
            return a == b
        if op == "MATCHES":
            try:
                return re.search(b, a) is not None
            except re.error:
                return None
        if op.startswith("VERSION_"):
            ka, kb = _version_key(a), _version_key(b)
            if ka is None or kb is None:
                return False if (a == "" or b == "") else None
            width = max(len(ka), len(kb))
            ka, kb = ka + (0,) * (width - len(ka)), kb + (0,) * (width - len(kb))
            return {"VERSION_EQUAL": ka == kb, "VERSION_LESS": ka < kb, "VERSION_GREATER": ka > kb,
                    "VERSION_LESS_EQUAL": ka <= kb, "VERSION_GREATER_EQUAL": ka >= kb}[op]
        if op.startswith("STR"):
            return {"STRLESS": a < b, "STRGREATER": a > b, "STRLESS_EQUAL": a <= b, "STRGREATER_EQUAL": a >= b}[op]
        try:
            x, y = float(a), float(b)
        except ValueError:
            return False
        return {"EQUAL": x == y, "LESS": x < y, "GREATER": x > y, "LESS_EQUAL": x <= y, "GREATER_EQUAL": x >= y}[op]

    def _truth(self, argument: Argument, scope: _Scope) -> bool | None:
        expanded = self._expand_options(argument.text, scope)
        if expanded is None:
            return None
        answers = set()
        for text in expanded:
            constant = _constant_truth(text)
            if constant is not None or argument.kind != "unquoted":
                answers.add(bool(constant))
                continue
            # A word that is not a constant names a variable: true when set to a true value.
            switch = switch_in_world(text, self.world)
            value = scope.variables.get(text)
            if switch is not None:
                answers.add(switch)
            elif value is None:
                answers.add(None)
            elif value.options is None:
                answers.add(None)
            else:
                for option in value.options:
                    truth = _constant_truth(option)
                    answers.add(True if truth is None and option else truth)
        if len(answers) != 1:
            return None
        return next(iter(answers))

    # --- built-in commands that change state -------------------------------------------------

    def _set_variable(self, scope: _Scope, name: str, value: Value | None, parent: bool = False) -> None:
        target = scope.parent if parent else scope.variables
        if target is None:
            return
        if value is None:
            target.pop(name, None)
        else:
            target[name] = value

    def _cmd_set(self, command: Command, scope: _Scope) -> None:
        arguments = list(command.arguments)
        if not arguments:
            return
        name = self._expand_text(arguments[0].text, scope)
        if name is None:
            return
        values = arguments[1:]
        parent = False
        if values and values[-1].kind == "unquoted" and values[-1].text == "PARENT_SCOPE":
            parent = True
            values = values[:-1]
        cache = None
        for index, argument in enumerate(values):
            if argument.kind == "unquoted" and argument.text == "CACHE":
                cache = index
                break
        if cache is not None:
            forced = any(a.kind == "unquoted" and a.text == "FORCE" for a in values[cache:])
            values = values[:cache]
            if name in scope.variables and not forced:
                return
        if not values:
            self._set_variable(scope, name, None, parent)
            return
        texts, items = self._expanded_list(values, scope)
        value = Value(frozenset({";".join(texts)}) if texts is not None else None, items)
        self._set_variable(scope, name, value, parent)

    def _cmd_unset(self, command: Command, scope: _Scope) -> None:
        if command.arguments:
            name = self._expand_text(command.arguments[0].text, scope)
            if name:
                parent = any(a.text == "PARENT_SCOPE" for a in command.arguments[1:])
                self._set_variable(scope, name, None, parent)

    def _cmd_option(self, command: Command, scope: _Scope) -> None:
        if command.arguments:
            name = self._expand_text(command.arguments[0].text, scope)
            if name and name not in scope.variables:
                # The user chooses: unknown here, whatever the default.
                scope.variables[name] = UNKNOWN

    def _cmd_list(self, command: Command, scope: _Scope) -> None:
        arguments = command.arguments
        if len(arguments) < 2:
            return
        action = arguments[0].text.upper()
        name = self._expand_text(arguments[1].text, scope)
        if name is None:
            return
        current = scope.variables.get(name, Value.known(""))
        if action in ("APPEND", "PREPEND", "INSERT"):
            rest = arguments[2:] if action != "INSERT" else arguments[3:]
            texts, items = self._expanded_list(rest, scope)
            options = None
            addition = ";".join(texts) if texts is not None else ""
            if current.options is not None and any(len(o) + len(addition) > MAX_VALUE_CHARACTERS for o in current.options):
                self._value_too_long(scope)
            elif current.options is not None and texts is not None and action != "INSERT":
                options = frozenset(
                    (f"{o};{addition}" if o and addition else o + addition) if action == "APPEND"
                    else (f"{addition};{o}" if o and addition else addition + o)
                    for o in current.options
                )
            # Appending needs no de-duplication (a source listed twice is compiled once), and
            # skipping it keeps long lists built one element at a time linear.
            combined = (current.items + items) if action == "APPEND" else (items + current.items)
            scope.variables[name] = Value(options, self._kept_items(combined, scope))
        elif action == "REMOVE_ITEM":
            texts, _ = self._expanded_list(arguments[2:], scope)
            if texts is None:
                return
            removed = set(texts)
            options = None
            if current.options is not None:
                options = frozenset(";".join(p for p in _split_list(o) if p not in removed) for o in current.options)
            scope.variables[name] = Value(options, tuple(i for i in current.items if i.text not in removed))
        elif action == "FILTER" and len(arguments) >= 5:
            mode, pattern = arguments[2].text.upper(), self._expand_text(arguments[4].text, scope)
            if pattern is None:
                return
            try:
                regex = re.compile(pattern)
            except re.error:
                return
            keep = (lambda t: regex.search(t) is not None) if mode == "INCLUDE" else (lambda t: regex.search(t) is None)
            options = None
            if current.options is not None:
                options = frozenset(";".join(p for p in _split_list(o) if keep(p)) for o in current.options)
            scope.variables[name] = Value(options, tuple(i for i in current.items if keep(i.text)))
        elif action in ("REMOVE_DUPLICATES", "SORT", "TRANSFORM", "REVERSE"):
            scope.variables[name] = Value(None, current.items) if action == "TRANSFORM" else current
        elif action in ("LENGTH", "GET", "FIND", "JOIN", "SUBLIST", "POP_BACK", "POP_FRONT", "REMOVE_AT"):
            output = self._expand_text(arguments[-1].text, scope)
            if output:
                scope.variables[output] = UNKNOWN

    def _cmd_string(self, command: Command, scope: _Scope) -> None:
        arguments = command.arguments
        if len(arguments) < 2:
            return
        action = arguments[0].text.upper()
        if action in ("APPEND", "PREPEND"):
            name = self._expand_text(arguments[1].text, scope)
            if not name:
                return
            addition = "".join(self._expand_text(a.text, scope) or "\0" for a in arguments[2:])
            current = scope.variables.get(name, Value.known(""))
            if current.options is not None and any(len(o) + len(addition) > MAX_VALUE_CHARACTERS for o in current.options):
                self._value_too_long(scope)
                scope.variables[name] = Value(None, current.items)
            elif "\0" in addition or current.options is None:
                scope.variables[name] = Value(None, current.items)
            else:
                scope.variables[name] = Value(
                    frozenset(o + addition if action == "APPEND" else addition + o for o in current.options), current.items
                )
            return
        if action == "REPLACE" and len(arguments) >= 4:
            match, replacement = self._expand_text(arguments[1].text, scope), self._expand_text(arguments[2].text, scope)
            output = self._expand_text(arguments[3].text, scope)
            inputs = [self._expand_text(a.text, scope) for a in arguments[4:]]
            if output is None:
                return
            if match is None or replacement is None or any(x is None for x in inputs) or not match:
                scope.variables[output] = UNKNOWN
                return
            subject = "".join(inputs)
            if len(subject) + subject.count(match) * len(replacement) > MAX_VALUE_CHARACTERS:
                self._value_too_long(scope)
                scope.variables[output] = UNKNOWN
                return
            scope.variables[output] = Value.known(subject.replace(match, replacement))
            return
        if action in ("TOLOWER", "TOUPPER") and len(arguments) >= 3:
            source, output = self._expand_text(arguments[1].text, scope), self._expand_text(arguments[2].text, scope)
            if output:
                if source is None:
                    scope.variables[output] = UNKNOWN
                else:
                    scope.variables[output] = Value.known(source.lower() if action == "TOLOWER" else source.upper())
            return
        # Every other form writes its result into a variable this reader does not compute.
        index = _STRING_OUTPUT.get(action)
        if action == "REGEX" and len(arguments) > 1:
            index = 4 if arguments[1].text.upper() == "REPLACE" else 3
        if index is None:
            index = len(arguments) - 1
        if index < len(arguments):
            output = self._expand_text(arguments[index].text, scope)
            if output and _IDENTIFIER.fullmatch(output):
                scope.variables[output] = UNKNOWN

    def _cmd_file(self, command: Command, scope: _Scope) -> None:
        arguments = command.arguments
        if len(arguments) < 2:
            return
        action = arguments[0].text.upper()
        if action not in ("GLOB", "GLOB_RECURSE"):
            if action in ("READ", "STRINGS", "RELATIVE_PATH", "TO_CMAKE_PATH", "TO_NATIVE_PATH", "REAL_PATH",
                          "SHA256", "MD5", "TIMESTAMP", "SIZE", "READ_SYMLINK"):
                output = self._expand_text(arguments[2 if action in ("READ", "STRINGS", "REAL_PATH") else 1].text, scope) if len(arguments) > 2 else None
                if output and _IDENTIFIER.fullmatch(output):
                    scope.variables[output] = UNKNOWN
            return
        name = self._expand_text(arguments[1].text, scope)
        if name is None:
            return
        patterns: list[str] = []
        skip_next = False
        for argument in arguments[2:]:
            if skip_next:
                skip_next = False
                continue
            if argument.kind == "unquoted" and argument.text in ("RELATIVE", "LIST_DIRECTORIES"):
                skip_next = True
                continue
            if argument.kind == "unquoted" and argument.text in ("CONFIGURE_DEPENDS", "FOLLOW_SYMLINKS"):
                continue
            value = self._expand_argument(argument, scope)
            if value.options is None:
                scope.variables[name] = UNKNOWN
                return
            patterns.extend(i.text for i in value.items)
        origin = self._origin(scope, command.line)
        found: list[str] = []
        for pattern in patterns:
            found.extend(self._glob(pattern, scope.source_dir, recursive=action == "GLOB_RECURSE"))
        found = sorted(dict.fromkeys(found))
        items = tuple(Item(p, origin) for p in found)
        scope.variables[name] = Value(frozenset({";".join(found)}), items)

    def _glob(self, pattern: str, base: str, recursive: bool) -> list[str]:
        """Files a CMake glob matches: `*` stays within a directory; GLOB_RECURSE walks the
        whole tree under each directory the pattern's directory part matches. Only inside the
        project: no link to a folder is followed, and no file a link takes out of it is named."""
        if _GENERATED in pattern:
            return []
        full = os.path.normpath(pattern if os.path.isabs(pattern) else os.path.join(base, pattern))
        if not is_within(full, self.root):
            return []
        if not recursive:
            return glob_within(full, self.root)
        directory, name_pattern = os.path.split(full)
        real_root = os.path.realpath(self.root)
        matches = []
        for top in glob_within(directory, self.root, kind="folder") if glob.has_magic(directory) else [directory]:
            if not is_within(os.path.realpath(top), real_root):
                continue  # a link out of the project
            for current, dirnames, filenames in os.walk(top):
                dirnames.sort()
                for name in sorted(filenames):
                    path = os.path.join(current, name)
                    if fnmatch.fnmatchcase(name, name_pattern) and (
                        not os.path.islink(path) or is_within(os.path.realpath(path), real_root)
                    ):
                        matches.append(path)
        return matches

    def _cmd_include(self, command: Command, scope: _Scope) -> None:
        if not command.arguments:
            return
        target = self._expand_text(command.arguments[0].text, scope)
        if not target:
            return
        candidates = []
        if target.endswith(".cmake") or "/" in target:
            candidates.append(target if os.path.isabs(target) else os.path.join(scope.source_dir, target))
            candidates.append(os.path.join(scope.list_dir, target))
        else:
            module_path = scope.variables.get("CMAKE_MODULE_PATH")
            directories = [i.text for i in module_path.items] if module_path else []
            candidates.extend(os.path.join(d, target + ".cmake") for d in directories)
        for candidate in candidates:
            candidate = os.path.normpath(candidate)
            if is_within(candidate, self.root) and os.path.isfile(candidate):
                self.run_file(candidate, scope)
                return

    def _cmd_include_guard(self, command: Command, scope: _Scope) -> None:
        # The second time a guarded file is read, in the same directory (or at all, GLOBAL),
        # it stops here: a guarded include cycle ends as in CMake.
        is_global = any(a.text == "GLOBAL" for a in command.arguments)
        key = (scope.list_file,) if is_global else (scope.list_file, scope.source_dir)
        if key in self.guarded:
            scope.returned = True
        self.guarded.add(key)

    def _cmd_add_subdirectory(self, command: Command, scope: _Scope) -> None:
        if not command.arguments:
            return
        target = self._expand_text(command.arguments[0].text, scope)
        if not target:
            return
        directory = os.path.normpath(target if os.path.isabs(target) else os.path.join(scope.source_dir, target))
        listfile = os.path.join(directory, "CMakeLists.txt")
        if not is_within(directory, self.root) or not os.path.isfile(listfile):
            return
        child = scope.copy()
        child.source_dir = directory
        child.variables["CMAKE_CURRENT_SOURCE_DIR"] = Value.known(directory)
        child.parent = scope.variables
        self.run_file(listfile, child)

    def _cmd_cmake_parse_arguments(self, command: Command, scope: _Scope) -> None:
        arguments = list(command.arguments)
        if not arguments:
            return
        if arguments[0].text == "PARSE_ARGV":
            if len(arguments) < 6:
                return
            start = self._expand_text(arguments[1].text, scope)
            prefix = self._expand_text(arguments[2].text, scope)
            keyword_args = arguments[3:6]
            argv = scope.variables.get("ARGV")
            values = list(argv.items) if argv else []
            try:
                values = values[int(start or 0) :]
            except ValueError:
                values = []
        else:
            if len(arguments) < 4:
                return
            prefix = self._expand_text(arguments[0].text, scope)
            keyword_args = arguments[1:4]
            values = []
            for argument in arguments[4:]:
                values.extend(self._expand_argument(argument, scope).items)
        if prefix is None:
            return
        keyword_lists = []
        for argument in keyword_args:
            text = self._expand_text(argument.text, scope)
            keyword_lists.append(set(_split_list(text)) if text is not None else set())
        options, singles, multis = keyword_lists
        collected: dict[str, list[Item]] = {}
        current = None
        for item in values:
            if item.text in options:
                collected[item.text] = []
                current = None
            elif item.text in singles or item.text in multis:
                current = item.text
                collected.setdefault(current, [])
            elif current is not None:
                collected[current].append(item)
                if current in singles:
                    current = None
        for keyword in options:
            scope.variables[f"{prefix}_{keyword}"] = Value.known("TRUE" if keyword in collected else "FALSE")
        for keyword in singles | multis:
            found = collected.get(keyword)
            if found is None:
                scope.variables.pop(f"{prefix}_{keyword}", None)
            else:
                scope.variables[f"{prefix}_{keyword}"] = Value.known(";".join(i.text for i in found), tuple(found))

    def _cmd_include_directories(self, command: Command, scope: _Scope) -> None:
        self._include_dirs(command.arguments, scope)

    def _cmd_target_include_directories(self, command: Command, scope: _Scope) -> None:
        self._include_dirs(command.arguments[1:], scope)

    def _include_dirs(self, arguments, scope: _Scope) -> None:
        for argument in arguments:
            for item in self._expand_argument(argument, scope).items:
                text = item.text
                if text in ("SYSTEM", "BEFORE", "AFTER", "PRIVATE", "PUBLIC", "INTERFACE") or text.startswith("$<"):
                    continue
                path = os.path.normpath(text if os.path.isabs(text) else os.path.join(scope.source_dir, text))
                if is_within(path, self.root) and os.path.isdir(path):
                    self.facts.include_dirs.add(path)

    def _cmd_get_filename_component(self, command: Command, scope: _Scope) -> None:
        if command.arguments:
            output = self._expand_text(command.arguments[0].text, scope)
            if output:
                scope.variables[output] = UNKNOWN

    def _cmd_execute_process(self, command: Command, scope: _Scope) -> None:
        words = [a.text for a in command.arguments]
        for keyword in ("OUTPUT_VARIABLE", "RESULT_VARIABLE", "ERROR_VARIABLE"):
            if keyword in words and words.index(keyword) + 1 < len(words):
                scope.variables[words[words.index(keyword) + 1]] = UNKNOWN

    def _cmd_project(self, command: Command, scope: _Scope) -> None:
        if command.arguments:
            name = self._expand_text(command.arguments[0].text, scope)
            if name:
                scope.variables[f"{name}_SOURCE_DIR"] = Value.known(scope.source_dir)
            scope.variables["PROJECT_SOURCE_DIR"] = Value.known(scope.source_dir)


def _condition_text(arguments: tuple[Argument, ...]) -> str:
    parts = []
    for argument in arguments:
        parts.append(f'"{argument.text}"' if argument.kind == "quoted" else argument.text)
    text = " ".join(parts).replace("( ", "(").replace(" )", ")")
    return text if len(text) <= 120 else text[:117] + "..."


def read_cmake(
    root: str, entries: list[str], read_file, facts: BuildFacts | None = None, budget: WorkBudget | None = None
) -> BuildFacts:
    """Walk CMake entry files (absolute paths) as both builds; what each compiles and defines.
    Each statement spends a step of `budget` (OutOfBudget ends the walk), and a cap that cuts
    the walk short is noted in it (see rocmlint.build.budget)."""
    facts = facts or BuildFacts()
    budget = budget if budget is not None else WorkBudget()
    parsed: dict[str, list] = {}
    for world in (ROCM, CUDA):
        reader = CMakeReader(root, world, facts, read_file, parsed, budget)
        for entry in entries:
            scope = reader.new_scope(os.path.dirname(entry))
            reader.run_file(entry, scope)
        if world == ROCM and reader.hipify_origin is not None:
            why = f"{reader.hipify_origin.describe()} runs a hipify step on the ROCm build's sources"
            for path in facts.compiled[ROCM]:
                facts.hipified.setdefault(path, why)
    return facts
