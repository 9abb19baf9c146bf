"""The C preprocessor as HIP-Clang sees it on AMD: directives, and what a condition is worth.

Shared by the per-file gates (`rocmlint.python.gates.PreprocessorGates`) and the project pass
(`rocmlint.project`), which reads every C/C++ file's directives to learn which macros the
project defines for NVIDIA only, and which headers the ROCm build includes.

A condition's value is known where HIP-Clang's behaviour and the project's own definitions
decide it, and unknown (None) everywhere else: a macro may always come from the command line.
Known without any project: macros only NVIDIA's compilers define are undefined, because
clang defines `__CUDA_ARCH__` and `__CUDA__` for CUDA only, never for HIP (llvm/llvm-project
D45441, clang/lib/Frontend/InitPreprocessor.cpp). A `MacroTable` adds what the project model
learned, such as "PTX_AVAILABLE is only ever defined under `#if __CUDA_ARCH__ >= 530`".
"""

from __future__ import annotations

import bisect
import re

from rocmlint.platforms import names_cuda, names_platform, names_rocm
from rocmlint.records import field, record

# --- which macros name a GPU stack -----------------------------------------------------------

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Words of a condition that are operators or keywords, never macro names.
_CONDITION_KEYWORDS = {"defined", "__has_include", "__has_include_next", "__has_builtin", "__has_attribute"}
# CPU-architecture macros that contain "amd" (`__amd64__`, `_M_AMD64`) say nothing about GPUs.
_CPU_ARCH = re.compile(r"amd64", re.IGNORECASE)


def _is_gpu_platform_macro(word: str) -> bool:
    return word not in _CONDITION_KEYWORDS and names_platform(word) and not _CPU_ARCH.search(word)


# Macros that only NVIDIA's compilers define (see the module docstring).
NVIDIA_COMPILER_ONLY = re.compile(
    r"^(__CUDA_ARCH__|__CUDA_ARCH_[A-Z0-9_]+|__CUDACC_VER_[A-Z]+__|__CUDACC_RDC__|__NVCC__|__CUDA__|"
    r"__NVPTX__|__NVCOMPILER|__NVCOMPILER_CUDA__)$"
)


# The CUDA toolkit's version macros (cuda.h's CUDA_VERSION, cuda_runtime_api.h's
# CUDART_VERSION), which HIP does not define. PyTorch's hipify renames CUDA_VERSION to
# TORCH_HIP_VERSION (major * 100 + minor: 700 for ROCm 7.0), so whether it is defined is
# unknown, but under HIP its value is below any CUDA release's (7000 for CUDA 7.0): taken as 0.
CUDA_TOOLKIT_VERSION = re.compile(r"^(CUDA_VERSION|CUDART_VERSION|__CUDART_API_VERSION)$")


@record
class MacroFact:
    defined: bool | None  # None: unknown
    value: int | None  # its value in #if, when known
    reason: str | None = None  # for project facts: where the project says so


UNDEFINED = MacroFact(False, 0)
UNKNOWN_MACRO = MacroFact(None, None)
CUDA_TOOLKIT_UNDER_HIP = MacroFact(None, 0)


@record(mutable=True)
class MacroTable:
    """What is known of macros under HIP-Clang on AMD, beyond the compilers' own macros.

    `facts`: project macros with a known state (PTX_AVAILABLE: undefined, because the project
    defines it only for NVIDIA), and compiler macros the project overrides (a HIP shim header
    that defines `__CUDA_ARCH__` makes it unknown again). `platform`: project macros whose
    definition depends on the GPU stack (`#if defined(__HIP_PLATFORM_AMD__)` `#define
    BNB_HIP 1`), which make a condition a platform gate like USE_ROCM does.
    """

    facts: dict[str, MacroFact] = field(default_factory=dict)
    platform: frozenset[str] = frozenset()

    def lookup(self, name: str) -> MacroFact:
        fact = self.facts.get(name)
        if fact is not None:
            return fact
        if NVIDIA_COMPILER_ONLY.match(name):
            return UNDEFINED
        if CUDA_TOOLKIT_VERSION.match(name):
            return CUDA_TOOLKIT_UNDER_HIP
        return UNKNOWN_MACRO

    def is_platform(self, word: str) -> bool:
        return word in self.platform or _is_gpu_platform_macro(word)


NO_PROJECT = MacroTable()


class _AmdSide(MacroTable):
    """Which side of a stack test is AMD's: macros that name ROCm/HIP/AMD are defined (1),
    NVIDIA-only ones undefined; the project's facts and everything else as in `base`."""

    def __init__(self, base: MacroTable):
        super().__init__(base.facts, base.platform)

    def lookup(self, name: str) -> MacroFact:
        fact = self.facts.get(name)
        if fact is not None and fact.defined is not None:
            return fact
        if name in _CURRENT_HIP_VERSION:
            # `defined(__HIP_PLATFORM_AMD__) && HIP_VERSION >= 502`: a current ROCm (7.0)
            return MacroFact(True, _CURRENT_HIP_VERSION[name])
        if names_rocm(name) and not _CPU_ARCH.search(name) and not names_cuda(name):
            return MacroFact(True, 1)
        if NVIDIA_COMPILER_ONLY.match(name) or names_cuda(name) or "NVCC" in name or "NVIDIA" in name.upper():
            return UNDEFINED
        return UNKNOWN_MACRO


# hip/hip_version.h of ROCm 7.0: HIP_VERSION is major * 10000000 + minor * 100000 + patch.
_CURRENT_HIP_VERSION = {
    "HIP_VERSION": 70000000, "HIP_VERSION_MAJOR": 7, "HIP_VERSION_MINOR": 0, "HIP_VERSION_PATCH": 0,
    "ROCM_VERSION_MAJOR": 7, "ROCM_VERSION_MINOR": 0, "ROCM_VERSION_PATCH": 0,
}


def amd_side_table(base: MacroTable) -> MacroTable:
    return _AmdSide(base)


class _NvidiaSide(MacroTable):
    """Which branches the NVIDIA build may compile: macros that name ROCm/HIP/AMD, HIP's version
    macros and the project's macros derived from the GPU stack are undefined; NVIDIA's compiler
    macros and everything else are unknown (any pass, any architecture). The project's facts are
    facts of the AMD build and are not used."""

    def __init__(self, base: MacroTable):
        super().__init__({}, base.platform)

    def lookup(self, name: str) -> MacroFact:
        if name in _CURRENT_HIP_VERSION or (names_rocm(name) and not names_cuda(name)):
            return UNDEFINED
        if name in self.platform and not names_cuda(name):
            return UNDEFINED
        return UNKNOWN_MACRO


def nvidia_side_table(base: MacroTable) -> MacroTable:
    return _NvidiaSide(base)


def condition_names_platform(condition: str, macros: MacroTable = NO_PROJECT) -> bool:
    """Does a preprocessor condition (comments already removed or not) test a GPU stack macro?"""
    condition = re.sub(r"//.*|/\*.*?\*/", " ", condition)
    return any(macros.is_platform(word) for word in _IDENT.findall(condition))


# --- condition values -----------------------------------------------------------------------

_TOKEN = re.compile(
    r"\s*(?:(?P<number>0[xX][0-9a-fA-F']+|\d[\d']*)[uUlLzZ]*"
    r"|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>&&|\|\||==|!=|<=|>=|<<|>>|[-+*/%<>!~&|^?:(),]))"
)
_BINARY = {  # operator: (precedence, function of two known ints)
    "||": (1, None),
    "&&": (2, None),
    "|": (3, lambda a, b: a | b),
    "^": (4, lambda a, b: a ^ b),
    "&": (5, lambda a, b: a & b),
    "==": (6, lambda a, b: int(a == b)),
    "!=": (6, lambda a, b: int(a != b)),
    "<": (7, lambda a, b: int(a < b)),
    ">": (7, lambda a, b: int(a > b)),
    "<=": (7, lambda a, b: int(a <= b)),
    ">=": (7, lambda a, b: int(a >= b)),
    "<<": (8, lambda a, b: a << b if 0 <= b < 64 else None),
    ">>": (8, lambda a, b: a >> b if 0 <= b < 64 else None),
    "+": (9, lambda a, b: a + b),
    "-": (9, lambda a, b: a - b),
    "*": (10, lambda a, b: a * b),
    "/": (10, lambda a, b: int(a / b) if b else None),
    "%": (10, lambda a, b: a - b * int(a / b) if b else None),
}


class _Unparsable(Exception):
    pass


class ConditionUnderHip:
    """The value of a #if condition as HIP-Clang sees it on AMD, where it can be known.

    Macros are looked up in a MacroTable (compiler facts plus the project's), `true`/`false`
    and integer literals are themselves, and every other macro is unknown (None). `&&`, `||`
    and `?:` short-circuit on known values, so `defined(__CUDA_ARCH__) && FOO` is known to be
    0 and `!defined(__CUDA_ARCH__) || FOO` 1. `deciding` lists the project facts that were
    used, so a gate can say why.
    """

    def __init__(self, condition: str, macros: MacroTable):
        self.macros = macros
        self.deciding: list[str] = []
        self.tokens: list[tuple[str, str]] = []
        position = 0
        text = condition.strip()
        while position < len(text):
            if text[position] == "<" and self.tokens and self.tokens[-1] == ("op", "("):
                # `__has_include(<hip/hip_runtime.h>)`: the header name is one opaque token.
                close = text.find(">", position)
                if close < 0:
                    raise _Unparsable
                self.tokens.append(("header", text[position : close + 1]))
                position = close + 1
                continue
            token = _TOKEN.match(text, position)
            if not token or token.end() == position:
                if text[position:].strip() == "":
                    break
                raise _Unparsable
            kind = token.lastgroup
            self.tokens.append((kind, token.group(kind)))
            position = token.end()
        self.index = 0

    @classmethod
    def evaluate(cls, condition: str, macros: MacroTable = NO_PROJECT) -> tuple[int | None, list[str]]:
        """(value or None, the project macros whose facts decided it)."""
        try:
            parser = cls(condition, macros)
            result = parser._expression(0)
            if parser.index != len(parser.tokens):
                return None, []
            return result, parser.deciding
        except (_Unparsable, IndexError, RecursionError, ValueError):
            return None, []

    @classmethod
    def value(cls, condition: str, macros: MacroTable = NO_PROJECT) -> int | None:
        return cls.evaluate(condition, macros)[0]

    def _peek(self) -> tuple[str, str] | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def _take(self, expected: str | None = None) -> tuple[str, str]:
        token = self.tokens[self.index]
        if expected is not None and token[1] != expected:
            raise _Unparsable
        self.index += 1
        return token

    def _expression(self, min_precedence: int) -> int | None:
        left = self._unary()
        while True:
            token = self._peek()
            if token is None or token[0] != "op":
                return left
            if token[1] == "?" and min_precedence == 0:
                self._take()
                then = self._expression(0)
                self._take(":")
                otherwise = self._expression(0)
                if left is None:
                    left = then if then == otherwise else None
                else:
                    left = then if left else otherwise
                continue
            if token[1] not in _BINARY or _BINARY[token[1]][0] < min_precedence:
                return left
            precedence, function = _BINARY[token[1]]
            self._take()
            right = self._expression(precedence + 1)
            if token[1] == "&&":
                left = 0 if (left == 0 or right == 0) else (1 if left is not None and right is not None else None)
            elif token[1] == "||":
                known_true = (left is not None and left != 0) or (right is not None and right != 0)
                left = 1 if known_true else (0 if left == 0 and right == 0 else None)
            else:
                left = None if left is None or right is None else function(left, right)

    def _fact(self, name: str) -> MacroFact:
        fact = self.macros.lookup(name)
        if fact.reason is not None and fact.defined is not None:
            self.deciding.append(name)
        return fact

    def _unary(self) -> int | None:
        kind, text = self._take()
        if kind == "op":
            if text == "(":
                inner = self._expression(0)
                self._take(")")
                return inner
            operand = self._unary()
            if operand is None:
                return None
            if text == "!":
                return int(not operand)
            if text == "~":
                return ~operand
            if text == "-":
                return -operand
            if text == "+":
                return operand
            raise _Unparsable
        if kind == "number":
            digits = text.replace("'", "")
            if digits[:2].lower() == "0x":
                return int(digits, 16)
            return int(digits, 8) if digits.startswith("0") and len(digits) > 1 else int(digits)
        if kind == "ident":
            if text == "defined":
                parenthesised = self._peek() == ("op", "(")
                if parenthesised:
                    self._take()
                name = self._take()[1]
                if parenthesised:
                    self._take(")")
                defined = self._fact(name).defined
                return None if defined is None else int(defined)
            if self._peek() == ("op", "("):
                self._skip_arguments()  # a function-like macro or __has_include(...)
                return None
            if text in ("true", "false"):
                return int(text == "true")
            fact = self._fact(text)
            if fact.defined is False:
                return 0  # an undefined macro is 0 in #if
            return fact.value
        raise _Unparsable

    def _skip_arguments(self) -> None:
        depth = 0
        while True:
            _, text = self._take()
            if text == "(":
                depth += 1
            elif text == ")":
                depth -= 1
                if depth == 0:
                    return


def condition_value(keyword: str, condition: str, macros: MacroTable = NO_PROJECT) -> tuple[int | None, list[str]]:
    """The value of a branch's condition under HIP-Clang (None: unknown, or #else)."""
    if keyword in ("ifdef", "elifdef"):
        condition = f"defined({condition.strip()})"
    elif keyword in ("ifndef", "elifndef"):
        condition = f"!defined({condition.strip()})"
    elif keyword not in ("if", "elif"):
        return None, []
    return ConditionUnderHip.evaluate(condition, macros)


# --- directives -----------------------------------------------------------------------------

_DIRECTIVE = re.compile(r"[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif|define|undef|include|include_next)\b(.*)", re.S)
_KEYWORD_AFTER_HASH = re.compile(r"[ \t]*(?:if|ifdef|ifndef|elif|elifdef|elifndef|else|endif|define|undef|include|include_next)\b")
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_RAW_DELIMITER = re.compile(r'([^\s()\\"]{0,16})\(')


@record
class Directive:
    line: int  # 1-based line of the '#'
    last_line: int  # the last line it spans (backslash continuations)
    keyword: str
    text: str  # the rest of the directive, comments removed, continuations joined


def scan_directives(text: str, exact: bool = True) -> list[Directive]:
    """Every preprocessor directive of a file, read from code only: directives inside comments
    or string literals (raw strings too) are not directives, and a comment inside a condition
    is ignored; string literals in conditions are kept (`__has_include("hip/hip_runtime.h")`).

    `exact=False` is for reading a whole project quickly: it recognises block comments and raw
    strings by a plain search instead of a full scan of every literal, which can only differ
    on a `/*` or `*/` inside a string literal that is not a raw string.
    """
    if exact:
        from rocmlint.cpp.cuda_syntax import blank_both

        code, with_strings = blank_both(text)
        return _directives_from_blanked(text, code, with_strings)
    return _directives_fast(text)


def _directives_from_blanked(raw: str, code: str, with_strings: str) -> list[Directive]:
    raw_lines = raw.split("\n")
    code_lines = code.split("\n")
    condition_lines = with_strings.split("\n")
    directives: list[Directive] = []
    count = len(code_lines)
    i = 0
    while i < count:
        match = _DIRECTIVE.match(code_lines[i])
        if not match:
            i += 1
            continue
        start = i
        parts = [condition_lines[i]]
        # A directive continues over lines that end in a backslash (trailing spaces allowed,
        # as GCC and Clang do; a comment after it ends the line).
        while raw_lines[i].rstrip().endswith("\\") and i + 1 < count:
            parts[-1] = parts[-1].rstrip()[:-1]
            i += 1
            parts.append(condition_lines[i])
        logical = _DIRECTIVE.match(" ".join(parts))
        rest = logical.group(2) if logical else ""
        directives.append(Directive(start + 1, i + 1, match.group(1), " ".join(rest.split())))
        i += 1
    return directives


def _word_char(text: str, index: int) -> bool:
    return index >= 0 and (text[index].isalnum() or text[index] == "_")


def _raw_prefix_ok(text: str, position: int) -> bool:
    """Is the `R` at `position` the start of a raw string (alone or after u8/u/U/L)?"""
    if not _word_char(text, position - 1):
        return True
    if text[position - 2 : position] == "u8":
        return not _word_char(text, position - 3)
    return text[position - 1] in "uUL" and not _word_char(text, position - 2)


def _directive_starts(text: str):
    """Offsets of the '#' of every line that starts with a directive (a plain search for '#'
    is several times faster than a multi-line regular expression on large trees)."""
    find, rfind = text.find, text.rfind
    position = find("#")
    while position >= 0:
        line_start = rfind("\n", 0, position) + 1
        if (line_start == position or not text[line_start:position].strip(" \t")) and _KEYWORD_AFTER_HASH.match(text, position + 1):
            yield line_start
        position = find("#", position + 1)


def _directives_fast(text: str) -> list[Directive]:
    if "#" not in text:
        return []
    hidden: list[tuple[int, int]] = []
    if "/*" in text:
        hidden.extend((m.start(), m.end()) for m in _BLOCK_COMMENT.finditer(text))
    position = text.find('R"')
    while position >= 0:
        # R"delim( ... )delim", with an optional u8/u/U/L prefix; not `fooR"`.
        delimiter = _RAW_DELIMITER.match(text, position + 2) if _raw_prefix_ok(text, position) else None
        if delimiter:
            close = text.find(")" + delimiter.group(1) + '"', delimiter.end())
            hidden.append((position, len(text) if close < 0 else close))
            position = text.find('R"', len(text) if close < 0 else close)
        else:
            position = text.find('R"', position + 2)
    hidden.sort()
    starts = [s for s, _ in hidden]
    directives: list[Directive] = []
    line, counted_to = 1, 0
    for position in _directive_starts(text):
        index = bisect.bisect_right(starts, position) - 1
        if index >= 0 and hidden[index][1] > position:
            continue
        line += text.count("\n", counted_to, position)
        counted_to = position
        end = text.find("\n", position)
        end = len(text) if end < 0 else end
        # Continuation lines: the line (before its newline, trailing blanks ignored) ends in '\\'.
        while end < len(text):
            back = end - 1
            while back > position and text[back] in " \t\r":
                back -= 1
            if text[back] != "\\":
                break
            following = text.find("\n", end + 1)
            end = len(text) if following < 0 else following
        body = text[position:end]
        extra = body.count("\n")
        if extra:
            body = re.sub(r"\\[ \t\r]*\n", " ", body)
        if "/*" in body:
            body = _BLOCK_COMMENT.sub(" ", body)
        if "//" in body:
            body = body.split("//", 1)[0] if '"' not in body else re.sub(r"//[^\"]*$", "", body)
        parsed = _DIRECTIVE.match(body)
        if parsed:
            directives.append(Directive(line, line + extra, parsed.group(1), " ".join(parsed.group(2).split())))
    return directives


# --- chains of branches ---------------------------------------------------------------------


class Chain:
    """One open #if/#elif/#else/#endif chain, as HIP-Clang reads it, with why it gates."""

    __slots__ = (
        "platform", "dead", "taken", "platform_at", "dead_at", "taken_at", "side_taken", "side_unknown", "amd_branch",
        "nvidia_taken", "shared",
    )

    def __init__(self, platform: bool, value: int | None, at: tuple[int, str, tuple[str, ...]]):
        # `at`: (line, directive as written, project macros whose facts decided its value)
        self.platform = platform  # a branch of this chain so far has tested a GPU stack macro
        self.platform_at = at if platform else None
        self.dead = value == 0  # HIP-Clang never compiles the current branch
        self.dead_at = at if self.dead else None
        self.taken = bool(value)  # HIP-Clang always takes an earlier (or the current) branch
        self.taken_at = at if self.taken else None
        # Which side of a stack test the current branch is, reading every macro that names
        # ROCm/HIP as defined and every NVIDIA-only one as undefined (see AMD_SIDE).
        self.side_taken = False  # an earlier branch is known to be the AMD side
        self.side_unknown = False  # an earlier branch's value under those assumptions is unknown
        self.amd_branch = False
        self.nvidia_taken = False  # an earlier branch is known to be taken by the NVIDIA build
        # The current branch is the AMD side and the NVIDIA build may compile it too
        # (`#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)`): code for both
        # stacks, which a test of a GPU stack macro does not make code for one.
        self.shared = False

    def side(self, value: int | None, is_else: bool, nvidia_value: int | None = 0) -> None:
        """Record the current branch's value with AMD_SIDE assumptions (`value`) and on the
        NVIDIA side (`nvidia_value`). The branch is the AMD side only when that is known: its
        condition is true and no earlier branch could be taken, or it is the `#else` after
        branches all known false. It is shared when, besides, the NVIDIA build may take it."""
        earlier_open = self.side_taken or self.side_unknown
        self.amd_branch = not earlier_open and (is_else or bool(value))
        self.side_taken = self.side_taken or bool(value)
        self.side_unknown = self.side_unknown or (value is None and not is_else)
        nvidia_possible = not self.nvidia_taken and (is_else or nvidia_value != 0)
        self.shared = self.amd_branch and nvidia_possible
        self.nvidia_taken = self.nvidia_taken or bool(nvidia_value)

    def amd_side(self) -> bool:
        """A platform chain whose current branch HIP compiles (`#ifdef USE_ROCM` side)."""
        return self.platform and not self.dead and self.amd_branch

    def next_branch(self, platform: bool, value: int | None, is_else: bool, at: tuple[int, str, tuple[str, ...]]) -> None:
        if platform and not self.platform:
            self.platform, self.platform_at = True, at
        if self.taken:
            self.dead, self.dead_at = True, None  # dead because an earlier branch is always taken
        else:
            self.dead = not is_else and value == 0
            self.dead_at = at if self.dead else None
        if value and not self.taken:
            self.taken, self.taken_at = True, at

    def gates(self) -> bool:
        return (self.platform and not self.shared) or self.dead

    def reason(self, macros: MacroTable) -> str | None:
        """Why code in the current branch is gated, in words; None when it is not."""
        if self.platform and not self.shared:
            line, text, _ = self.platform_at
            return f"inside `#{text}` (line {line}), code for one GPU stack"
        if not self.dead:
            return None
        if self.dead_at is None:
            line, text, deciding = self.taken_at
            why = f"after `#{text}` (line {line}), which HIP-Clang always takes"
        else:
            line, text, deciding = self.dead_at
            why = f"in `#{text}` (line {line}), which HIP-Clang never compiles"
        facts = [macros.facts[name].reason for name in deciding if name in macros.facts and macros.facts[name].reason]
        return why + (": " + "; ".join(dict.fromkeys(facts)) if facts else "")
