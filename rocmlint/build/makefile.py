"""Read a Makefile without running make: which sources each vendor's build compiles.

GNU make's conditionals (`ifeq`/`ifneq`/`ifdef`/`ifndef`, `else if...`, `endif`) are read as
the ROCm build and as the CUDA build (`rocmlint.build.worlds`), and variables are followed
through `=`, `:=`, `::=`, `?=` and `+=`, `$(VAR)`/`${VAR}` references and `$(wildcard ...)`.
A source named on a rule line (`target: prerequisites`) or in a recipe (`\t$(NVCC) -c a.cu`)
that the build reaches is compiled by it; naming one in a variable is not enough, so
`CUDA_SRCS = a.cu` used only under `ifeq ($(BUILD_AMD),)` stays with the CUDA build.
`-DNAME` flags on reached lines become macros. Functions other than `wildcard` (`shell`,
`patsubst`, ...) are unknown, as is anything the environment or the command line sets.
"""

from __future__ import annotations

import os
import re

from rocmlint.build import BuildFacts, Origin, is_source_path
from rocmlint.build.budget import MAX_LIST_ELEMENTS, MAX_VALUE_CHARACTERS, WorkBudget
from rocmlint.build.worlds import CUDA, ROCM, selects, switch_in_world
from rocmlint.files.tree import glob_within, is_within

_ASSIGNMENT = re.compile(r"^(?:override\s+|export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*(\+=|\?=|::=|:=|!=|=)\s*(.*)$")
_CONDITIONAL = re.compile(r"^(ifeq|ifneq|ifdef|ifndef)\b\s*(.*)$")
_REFERENCE = re.compile(r"\$[({]([^(){}]*)[)}]")
_DASH_D = re.compile(r"(?:^|\s)-D([A-Za-z_][A-Za-z0-9_]*)(?:=(\S*))?")
_TRUE_WORDS = {"1", "on", "yes", "true", "y"}
_MAX_OPTIONS = 8


class _Unknown(Exception):
    pass


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Lines with backslash continuations joined, each with its first line number."""
    lines: list[tuple[int, str]] = []
    buffer, start = [], 0
    for number, line in enumerate(text.split("\n"), start=1):
        if not buffer:
            start = number
        if line.endswith("\\"):
            buffer.append(line[:-1])
            continue
        buffer.append(line)
        lines.append((start, " ".join(buffer)))
        buffer = []
    if buffer:
        lines.append((start, " ".join(buffer)))
    return lines


class MakefileReader:
    def __init__(self, path: str, root: str, world: str, facts: BuildFacts, budget: WorkBudget | None = None):
        self.path = path
        self.budget = budget if budget is not None else WorkBudget()
        self.root = root
        self.base = os.path.dirname(path)
        self.relative = os.path.relpath(path, root).replace(os.sep, "/")
        self.world = world
        self.facts = facts
        # name -> possible values (None: unknown) and every word any of them holds
        self.variables: dict[str, tuple[frozenset[str] | None, tuple[tuple[str, Origin], ...]]] = {}

    def run(self, text: str) -> None:
        # Each frame: (active, taken, condition text, line) for one ifeq ... endif.
        frames: list[list] = []
        in_define = False
        for line_number, line in _logical_lines(text):
            self.budget.spend()
            stripped = line.strip()
            if in_define:
                if stripped.startswith("endef"):
                    in_define = False
                continue
            if stripped.startswith("define ") or stripped == "define":
                in_define = True
                continue
            code = line.split("#", 1)[0] if not line.startswith("\t") else line
            bare = code.strip()
            conditional = _CONDITIONAL.match(bare)
            if conditional:
                value = self._condition(conditional.group(1), conditional.group(2))
                frames.append([value, value is True, f"{conditional.group(1)} {conditional.group(2).strip()}", line_number])
                continue
            if bare.startswith("else"):
                if frames:
                    frame = frames[-1]
                    rest = bare[4:].strip()
                    nested = _CONDITIONAL.match(rest)
                    if frame[1]:
                        frame[0] = False
                    elif nested:
                        value = self._condition(nested.group(1), nested.group(2))
                        frame[0], frame[2], frame[3] = value, f"{nested.group(1)} {nested.group(2).strip()}", line_number
                        frame[1] = value is True
                    else:
                        previous = frame[0]
                        frame[0] = True if previous is False else None
                        frame[2] = f"else of {frame[2]}"
                        frame[3] = line_number
                continue
            if bare == "endif" or bare.startswith("endif "):
                if frames:
                    frames.pop()
                continue
            if any(frame[0] is False for frame in frames):
                continue
            condition = next(((f[2], f[3]) for f in reversed(frames)), (None, None))
            origin = Origin(self.relative, line_number, condition[0], condition[1])
            certain = all(frame[0] is True for frame in frames)
            self.facts.reach(self.world, (self.path, line_number), [(f[2], f[3]) for f in frames])
            self._line(code, origin, certain)

    def _line(self, code: str, origin: Origin, certain: bool) -> None:
        assignment = _ASSIGNMENT.match(code.strip()) if not code.startswith("\t") else None
        if assignment:
            name, operator, value = assignment.groups()
            options, words = self._expand(value, origin)
            if origin.condition:
                # What a conditional line adds is built under that condition: say so.
                words = tuple((word, origin) for word, _ in words)
            current = self.variables.get(name)
            if operator == "+=" and current is not None:
                old_options, old_words = current
                if old_options is not None and options is not None:
                    options = frozenset(f"{a} {b}".strip() for a in old_options for b in options)
                    if len(options) > _MAX_OPTIONS:
                        options = None
                else:
                    options = None
                words = old_words + words
            elif operator == "?=" and current is not None:
                return
            elif operator == "!=":
                options, words = None, ()
            if not certain and current is not None:
                # Set in a branch the reader cannot decide: either value may hold.
                old_options, old_words = current
                options = None if old_options is None or options is None else old_options | options
                seen = set(old_words)
                words = old_words + tuple(w for w in words if w not in seen)
            self.variables[name] = self._capped(options, words)
            return
        # A rule line or a recipe: what it names is built.
        _, words = self._expand(code, origin)
        for word, word_origin in words:
            self._compile(word, word_origin)
        for match in _DASH_D.finditer(" ".join(w for w, _ in words)):
            self.facts.define(self.world, match.group(1), match.group(2), origin)

    def _capped(self, options, words):
        """A variable's value within the caps: a longer string is unknown, a longer list is cut
        (and the walk with it: see rocmlint.build.budget)."""
        if options is not None and any(len(o) > MAX_VALUE_CHARACTERS for o in options):
            self.budget.limit(f"a value longer than {MAX_VALUE_CHARACTERS:,} characters in {self.relative}")
            options = None
        if len(words) > MAX_LIST_ELEMENTS:
            self.budget.limit(f"a list of more than {MAX_LIST_ELEMENTS:,} words in {self.relative}")
            words = words[:MAX_LIST_ELEMENTS]
        return options, words

    def _compile(self, word: str, origin: Origin) -> None:
        word = word.rstrip(":;,")
        if not is_source_path(word):
            return
        paths = glob_within(os.path.join(self.base, word), self.root) if any(c in word for c in "*?[") else [os.path.join(self.base, word)]
        for path in paths:
            path = os.path.normpath(path)
            if is_within(path, self.root) and os.path.isfile(path):
                self.facts.compile(self.world, path, origin)

    def _expand(self, text: str, origin: Origin) -> tuple[frozenset[str] | None, tuple[tuple[str, Origin], ...]]:
        """Possible expansions of a text (None: unknown) and the words it may contain.

        Each possible expansion is built as a list of pieces joined once at the end, so a long
        line with many references takes time in proportion to its length."""
        words: list[tuple[str, Origin]] = []
        # The pieces of each possible expansion (None: unknown), and the length of the longest.
        pieces: list[list[str]] | None = [[]]
        length = 0
        position = 0

        def add_words(new) -> None:
            if len(words) + len(new) > MAX_LIST_ELEMENTS:
                self.budget.limit(f"a list of more than {MAX_LIST_ELEMENTS:,} words in {self.relative}")
                new = new[: max(0, MAX_LIST_ELEMENTS - len(words))]
            words.extend(new)

        def add_text(values) -> None:
            """Every possible expansion so far followed by each of `values`."""
            nonlocal pieces, length
            if pieces is None:
                return
            length += max(map(len, values), default=0)
            if length > MAX_VALUE_CHARACTERS:
                self.budget.limit(f"a value longer than {MAX_VALUE_CHARACTERS:,} characters in {self.relative}")
                pieces = None
            elif len(values) == 1:
                for piece in pieces:
                    piece.append(values[0])
            else:
                joined = {"".join(piece) + value for piece in pieces for value in values}
                pieces = [[option] for option in sorted(joined)] if len(joined) <= _MAX_OPTIONS else None

        for match in _REFERENCE.finditer(text):
            literal = text[position : match.start()]
            add_text([literal])
            add_words([(w, origin) for w in literal.split()])
            position = match.end()
            inner = match.group(1)
            if inner.startswith("wildcard "):
                self.budget.spend()  # it lists folders: other references cost only their text
                pattern_options, _ = self._expand(inner[9:], origin)
                found = []
                for pattern in sorted(pattern_options or ()):
                    for part in pattern.split():
                        matches = glob_within(os.path.join(self.base, part), self.root, kind="any")
                        found.extend(os.path.relpath(p, self.base) for p in matches)
                add_words([(f, origin) for f in found])
                add_text([" ".join(found)])
                continue
            value = self.variables.get(inner.strip())
            if value is None:
                switch = switch_in_world(inner.strip(), self.world)
                if switch is False:
                    value = (frozenset({""}), ())
                else:
                    pieces = None
                    continue
            value_options, value_words = value
            add_words(value_words)
            if value_options is None:
                pieces = None
            else:
                add_text(sorted(value_options))
        tail = text[position:]
        add_words([(w, origin) for w in tail.split()])
        add_text([tail])
        options = None if pieces is None else frozenset("".join(piece).strip() for piece in pieces)
        return options, tuple(words)

    # --- conditions ------------------------------------------------------------------------

    def _condition(self, keyword: str, rest: str) -> bool | None:
        if keyword in ("ifdef", "ifndef"):
            name = rest.strip()
            if name in self.variables:
                options = self.variables[name][0]
                defined = None if options is None else (True if all(o for o in options) else (False if not any(options) else None))
            else:
                defined = switch_in_world(name, self.world)
            if defined is None:
                return None
            return defined if keyword == "ifdef" else not defined
        operands = self._operands(rest)
        if operands is None:
            return None
        equal = self._equal(*operands)
        if equal is None:
            return None
        return equal if keyword == "ifeq" else not equal

    @staticmethod
    def _operands(rest: str) -> tuple[str, str] | None:
        rest = rest.strip()
        if rest.startswith("(") and rest.endswith(")"):
            inner = rest[1:-1]
            depth = 0
            for index, char in enumerate(inner):
                if char in "({":
                    depth += 1
                elif char in ")}":
                    depth -= 1
                elif char == "," and depth == 0:
                    return inner[:index].strip(), inner[index + 1 :].strip()
            return None
        quoted = re.fullmatch(r"""(["'])(.*?)\1\s+(["'])(.*?)\3""", rest)
        return (quoted.group(2), quoted.group(4)) if quoted else None

    def _side(self, text: str) -> tuple[frozenset[str] | None, str | None]:
        """The values an operand may have, and the variable it reads when it is one reference."""
        single = re.fullmatch(r"\$[({]([A-Za-z_][A-Za-z0-9_.-]*)[)}]", text.strip())
        if single and single.group(1) not in self.variables:
            switch = switch_in_world(single.group(1), self.world)
            if switch is True:
                return frozenset({"\0on"}), single.group(1)
            if switch is False:
                return frozenset({""}), single.group(1)
            return None, single.group(1)
        options, _ = self._expand(text, Origin(self.relative, 0))
        return options, None

    def _equal(self, left_text: str, right_text: str) -> bool | None:
        left, _ = self._side(left_text)
        right, _ = self._side(right_text)
        if left is None or right is None:
            known = right if left is None else left
            if known is not None and (left is None) != (right is None):
                answers = {selects(text, self.world) for text in known}
                if len(answers) == 1:
                    return next(iter(answers))
            return None
        answers = set()
        for a in left:
            for b in right:
                if "\0on" in (a, b):
                    other = b if a == "\0on" else a
                    answers.add(True if other.lower() in _TRUE_WORDS else (False if other in ("", "0") else None))
                else:
                    answers.add(a == b)
        return next(iter(answers)) if len(answers) == 1 else None


def read_makefile(
    path: str, root: str, text: str, facts: BuildFacts | None = None, budget: WorkBudget | None = None
) -> BuildFacts:
    """Read a Makefile as both builds. Each line and reference spends a step of `budget`
    (OutOfBudget ends the walk), and a cap that cuts it short is noted there."""
    facts = facts or BuildFacts()
    budget = budget if budget is not None else WorkBudget()
    if path not in facts.files_read:
        facts.files_read.append(path)
    for world in _worlds(text):
        MakefileReader(path, root, world, facts, budget).run(text)
    return facts


# A Makefile that compiles with HIP's compilers (`CXX = hipcc`, `--offload-arch=gfx942`) and
# names no NVIDIA toolchain builds for AMD only: its sources are not the CUDA build's.
_HIP_COMPILER = re.compile(r"(?<![\w-])(?:hipcc|amdclang\+\+)(?![\w-])|--offload-arch=gfx|--amdgpu-target=gfx")
_NVIDIA_COMPILER = re.compile(r"(?<![\w-])nvcc(?![\w-])|-gencode|\bsm_\d+|\bcompute_\d+|--cuda-gpu-arch")


def _worlds(text: str) -> tuple[str, ...]:
    code = re.sub(r"(?m)#.*$", "", text)
    if _HIP_COMPILER.search(code) and not _NVIDIA_COMPILER.search(code):
        return (ROCM,)
    return (ROCM, CUDA)
