"""Which Python files a check can match at all, read from their text before any parse.

A check's markers say which words its hits hold, but words such as "graph" or "benchmark"
are in half the modules of a large project, and parsing is most of what a Python check
costs. So each Python check also has a text test that names what its matcher can match,
spelled as it must appear in the file (`text_test`, built from the `python` matcher's spec):

- a qualified name (a call, a `with` context, a setting, a name referred to) is built by
  rocmlint.python.index.qualified_name from identifiers alone: the dotted chain as written,
  the file's import aliases (`import torch.cuda as tc`, `from torch import cuda`) and
  module-level `name = chain` assignments. So the name's last part is written after a dot
  (`cuda.graph`, `import torch.cuda.graph as g`), or the file imports it from its module
  (`from torch.cuda import graph`); and the chain before that dot, read back, either spells
  the rest of the name or starts with a name the file binds to the rest (`cuda as tc`,
  `tc = torch.cuda`);
- a setting is such a chain given a value (`=`, `+=`, an annotation with a value), or a key
  of `setattr`, `patch`, `patch.object`, `torch.compile(options=...)` or
  `compile_fx(config_patches=...)` (whose names are then in the file) written as a string or
  a keyword;
- a method (`x.item()`) is its name after a dot;
- an import is an import statement that names the module (`import m`, `from m import x`);
- a string constant (an environment variable, a setting's key, a module named to
  `importlib.import_module`) has its text in the file, unless a literal spells it with
  escapes (`"\\x41"`) or in adjacent pieces (`"TORCH" "INDUCTOR"`), which is looked for too.

The test is sound: it may keep a file that has no hit, and never drops one that has (the
checks' invalid examples are tested against it: tests/test_prefilter.py). Where the text
does not show plainly what the code is (a chain broken over lines, `(a.b).c`), the file is
kept. Identifiers are compared as Python reads them, NFKC-normalised. A check whose matcher
is a function has the test `function_test` gives it; where none is given, its markers are its
only test.

Every regular expression here starts with a word or a character, which the engine looks for
first: one that starts with `\\b` would be tried at every position of the text.
"""

from __future__ import annotations

import re

# Spaces within a line and backslash continuations: what may separate two tokens of a line.
_GAP = r"[ \t\f]*(?:\\\n[ \t\f]*)*"
# What may separate two tokens inside brackets: newlines and comments too. (A comment is
# read to its line's end, so that a line of `#`s is read one way only.)
_WIDE_GAP = r"(?:[\s\\]|#[^\n]*(?:\n|$))*"
# A line that holds no code: blank, or a comment.
_NO_CODE_LINE = re.compile(r"[ \t\f]*(?:#[^\n]*)?$")
# A line the next line may continue a chain of: it ends with a dot or a backslash, before a
# comment if any (read generously: a `#` in a string counts as one).
_CONTINUED = re.compile(r"[.\\][ \t\f]*(?:#[^\n]*)?$")
# Read backwards from a dot (on the reversed line): the chain of names before it.
_REVERSED_CHAIN = re.compile(r"[ \t\f]*(\w+(?:[ \t\f]*\.[ \t\f]*\w+)*)")
# What follows a chain that is assigned to: `=`, an augmented assignment, an annotation with
# a value (or one that goes on past its line); closing brackets first for `(a.b) = 1`.
_ASSIGNMENT = re.compile(
    rf"{_GAP}(?:\){_GAP})*(?:=(?!=)|(?:[-+*/%@&|^]|//|\*\*|>>|<<)=|:[^\n]*(?:=|[(\[{{]|\\\n))"
)
# What follows a chain at the end of its line: a parenthesised target may go on below.
_LINE_END = re.compile(rf"{_GAP}(?:\){_GAP})*(?:#[^\n]*)?(?:\n|$)")
# An opening bracket that is a call's or a subscript's (`f(`, `x[0](`), not one around a target.
_CALL_BRACKET = re.compile(r"[\w)\]][ \t\f]*\($")
# What follows a function's name where it is called, or bound to another name: `(`, the end
# of a line or statement (`f = torch.cuda.get_device_capability`, an import list), `,`, `as`.
_CALLED_OR_BOUND = rf"{_GAP}(?:\){_GAP})*(?:[(\n;#,]|as\b|$)"
# What may end an assignment's value that is a plain chain (or a name): the statement's end,
# or the end of a keyword argument or an element (read generously).
_VALUE_END = rf"{_GAP}(?:[\n;#)\]}},]|$)"
# After a name that may be bound: `= value`, through chained targets (`a = b = value`); the
# value is a chain, or one in brackets (its names before the last, and the last).
_ASSIGNED_VALUE = re.compile(
    rf"{_GAP}=(?!=){_GAP}(?:\w+(?:{_GAP}\.{_GAP}\w+)*{_GAP}=(?!=){_GAP})*"
    rf"(?:((?:\w+{_GAP}\.{_GAP})*)(\w+){_VALUE_END}"
    rf"|(?:\({_WIDE_GAP})+((?:\w+{_WIDE_GAP}\.{_WIDE_GAP})*)(\w+){_WIDE_GAP}\))"
)
# After `from module`: ` import` and the names it imports, in brackets or to the statement's end.
_IMPORTED_NAMES = rf"{_WIDE_GAP}import{_WIDE_GAP}(\((?:[^)#]|#[^\n]*)*\)?|(?:[^\n\\;#]|\\\n)*)"
# After something imported: ` as name`.
_AS_NAME = rf"{_WIDE_GAP}as{_WIDE_GAP}(\w+)"
# String escapes that spell a character (a backslash-newline, which joins two lines of a
# literal, is read as a piece boundary instead).
_ESCAPES = re.compile(r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|N\{[^}\n]*\}|[0-7]{1,3})")
_QUOTE = "[\"']"

UNCERTAIN = None  # a chain the text does not show plainly: the file is kept
OPEN = ""  # first in a chain that may go on from the line above (`a.\n    b.last`)


class PythonText:
    """One file's text as the tests read it; what one check's test found is kept for the next."""

    def __init__(self, text: str):
        self.raw = text
        self._has: dict[str, bool] = {}
        self._raw_has = self._has
        self._escaped: set[str] | None = None
        if not text.isascii():
            import unicodedata

            # Python reads identifiers NFKC-normalised (`ｃｕｄａ` is `cuda`); the markers are
            # looked for in the text as it is.
            text = unicodedata.normalize("NFKC", text)
            self._raw_has = {}
        self.text = text
        self._chains: dict[str, list] = {}
        self._searched: dict[re.Pattern, bool] = {}
        self._binds: dict[tuple[str, str], bool] = {}
        self._aliases: dict[str, set[str]] = {}

    def has(self, word: str) -> bool:
        """Is `word` in the text (kept: the engine asks for the markers, the tests for words)?"""
        found = self._has.get(word)
        if found is None:
            found = self._has[word] = word in self.text
        return found

    def escapes_spell(self, value: str) -> bool:
        """Does an escape sequence in the file spell one of the characters of `value` (so that
        a literal may spell `value` without holding its text)?"""
        if self._escaped is None:
            import codecs

            escaped = set()
            for hit in _ESCAPES.finditer(self.raw):
                try:
                    escaped.add(codecs.decode(hit.group(0), "unicode_escape"))
                except (UnicodeDecodeError, ValueError):
                    escaped.add("")  # `\N{...}` of no known name: read generously
            self._escaped = escaped
        return "" in self._escaped or any(character in self._escaped for character in value)

    def has_marker(self, marker: str) -> bool:
        """Is the check marker `marker` in the text as it is?"""
        found = self._raw_has.get(marker)
        if found is None:
            found = self._raw_has[marker] = marker in self.raw
        return found

    def search(self, pattern: "_Pattern") -> bool:
        found = self._searched.get(pattern)
        if found is None:
            found = self._searched[pattern] = pattern.search(self.text) is not None
        return found

    def binds(self, name: str, part: str, depth: int = 0) -> bool:
        """Can the file bind `name` to a qualified name that ends with `part`: as an import
        alias (`part as name`: `import torch.cuda as name`, `from torch import cuda as name`),
        by `name = <chain ending with part>`, or by `name = other` where `other` is `part` or
        can be bound to it (qualified_name follows a name's only binding, three deep)?"""
        key = (name, part)
        found = self._binds.get(key)
        if found is None:
            found = self._binds[key] = name in self._aliases_of(part) or self._assigned_to(name, part, depth)
        return found

    def _aliases_of(self, part: str) -> set[str]:
        """The names written after `part as` (import aliases of something ending with `part`)."""
        found = self._aliases.get(part)
        if found is None:
            found = self._aliases[part] = {hit.group(1) for hit in _compiled(re.escape(part) + _AS_NAME).finditer(self.text)}
        return found

    def _assigned_to(self, name: str, part: str, depth: int) -> bool:
        text = self.text
        position = text.find(name)
        while position >= 0:
            after = position + len(name)
            if position == 0 or not (text[position - 1].isalnum() or text[position - 1] == "_"):
                value = _ASSIGNED_VALUE.match(text, after)
                if value is not None:
                    dotted, last, bracketed_dotted, bracketed_last = value.groups()
                    if last is None:
                        dotted, last = bracketed_dotted, bracketed_last  # `name = (torch.cuda)`
                    if last == part:
                        return True
                    if not dotted and depth < 3 and last != name and self.binds(last, part, depth + 1):
                        return True
            position = text.find(name, after)
        return False

    def chains_ending(self, last: str) -> list:
        """(chain, start, end) for each chain written as `<chain>.last`: the names as written
        (`torch.cuda.graph` -> ("torch", "cuda", "graph")) and where they are; the chain is
        () where what the dot follows has no qualified name (`x[0].last`), UNCERTAIN where
        the text does not show it plainly (a dot that starts its line, `(a.b).last`, `last`
        starting a line that may go on from the line above)."""
        found = self._chains.get(last)
        if found is None:
            found = self._chains[last] = list(self._read_chains(last))
        return found

    def _read_chains(self, last: str):
        text = self.text
        word = re.escape(last)
        for hit in _compiled(rf"\.[ \t\f]*{word}(?!\w)").finditer(text):
            line_start = text.rfind("\n", 0, hit.start()) + 1
            chain, start = self._chain_before(line_start, hit.start())
            yield (chain if not chain else (*chain, last)), start, hit.end()
        for hit in _compiled(rf"\n[ \t\f]*{word}(?!\w)").finditer(text):
            if self._continued_from_above(hit.start() + 1):
                yield (OPEN, last), hit.start() + 1, hit.end()

    def _chain_before(self, line_start: int, dot: int):
        """(the names before the dot at `dot`, where they start), read back on its line."""
        before = self.text[line_start:dot][::-1]
        chain = _REVERSED_CHAIN.match(before)
        if chain is None:
            return _not_a_name(before), dot
        rest = before[chain.end():].lstrip(" \t\f")
        start = dot - chain.end()
        if rest[:1] == ".":
            return _not_a_name(rest[1:]), start  # `x[0].b.last`, `(a).b.last`
        names = [part.strip(" \t\f")[::-1] for part in chain.group(1).split(".")]
        if not rest and self._continued_from_above(line_start):
            names.append(OPEN)  # `a.\n    b.last`: the chain may start on a line above
        return tuple(reversed(names)), start

    def _continued_from_above(self, position: int) -> bool:
        """Can the line at `position` go on from the lines above: does the last line above
        that holds code end with a dot or a backslash (before its comment)?"""
        text = self.text
        end = text.rfind("\n", 0, position)
        while end >= 0:
            start = text.rfind("\n", 0, end) + 1
            line = text[start:end]
            # A blank line, or one that starts with `#` (a comment, or a line of a string:
            # neither ends a chain), says nothing: look above it.
            if not _NO_CODE_LINE.match(line):
                return _CONTINUED.search(line) is not None
            end = start - 1
        return False

    def assigned_at(self, start: int, end: int) -> bool:
        """Is the chain at text[start:end] assigned to, or may it be (a parenthesised target
        whose closing bracket is on a line below)?"""
        text = self.text
        if _ASSIGNMENT.match(text, end):
            return True
        if not _LINE_END.match(text, end):
            return False
        before = text[text.rfind("\n", 0, start) + 1 : start].rstrip(" \t\f")
        if not before:
            return True  # the chain starts its line: it may be inside brackets opened above
        return before.endswith("(") and not _CALL_BRACKET.search(before)


def _not_a_name(before_dot_reversed: str):
    """What a dot follows when that is not a name (the text before the dot, reversed):
    `x[0].`, `{...}.`, `"s".` have no qualified name, and `..` is a relative import, which
    binds no alias (); `(a.b).`, a dot that starts its line and the rest: UNCERTAIN."""
    rest = before_dot_reversed.lstrip(" \t\f")
    return () if rest[:1] in ("]", "}", '"', "'", ".") and rest else UNCERTAIN


class _Pattern:
    """A regular expression compiled when it is first used. The text tests of the catalog hold
    hundreds; a scan of a few files runs few of them, and compiling them all when the tests are
    made cost a one-file scan about a fifth of its time."""

    __slots__ = ("source", "_regex")

    def __init__(self, source: str):
        self.source = source
        self._regex: re.Pattern | None = None

    def _compiled(self) -> re.Pattern:
        if self._regex is None:
            self._regex = re.compile(self.source)
        return self._regex

    def search(self, text: str):
        return self._compiled().search(text)

    def finditer(self, text: str):
        return self._compiled().finditer(text)


_PATTERNS: dict[str, _Pattern] = {}


def _compiled(pattern: str) -> _Pattern:
    found = _PATTERNS.get(pattern)
    if found is None:
        found = _PATTERNS[pattern] = _Pattern(pattern)
    return found


def _nested(characters: str) -> str:
    """`a(?:b(?:c)?)?` for "abc": any non-empty start of `characters`."""
    nested = ""
    for character in reversed(characters[1:]):
        nested = f"(?:{re.escape(character)}{nested})?"
    return re.escape(characters[:1]) + nested


def _first_piece(value: str) -> _Pattern:
    """The first of adjacent literals that spell `value` together: a literal that holds a
    start of `value` and ends (`"TORCH" "INDUCTOR"`), or goes on to the next line after a
    backslash."""
    return _compiled(f"{_QUOTE}{_nested(value[:-1])}(?:{_QUOTE}|\\\\\\n)")


def _last_piece(value: str) -> _Pattern:
    """The last of adjacent literals that spell `value` together: a literal (or the line after
    a backslash inside one) that holds an end of `value` and ends there."""
    reversed_value = value[::-1]
    return _compiled(f"(?:{_QUOTE}|\\n)(?:{_nested_end(reversed_value[:-1])}){_QUOTE}")


def _nested_end(reversed_characters: str) -> str:
    """Any non-empty end of the characters whose reverse is given: `(?:(?:a)?b)?c` for "abc"."""
    nested = ""
    for character in reversed(reversed_characters[1:]):
        nested = f"(?:{nested}{re.escape(character)})?"
    return nested + re.escape(reversed_characters[:1])


def _in_pieces(text: str, value: str, open_start: bool = False, open_end: bool = False) -> bool:
    """Can adjacent string literals (or the lines of one that a backslash joins) spell `value`
    in two pieces or more? With `open_start` (`open_end`), the first (last) piece may hold more
    before (after) its part of `value`: a constant that ends (starts) with `value`."""
    quotes = ('"', "'")
    reached = [True] + [False] * len(value)
    for start in range(len(value)):
        if not reached[start]:
            continue
        lefts = ("",) if start == 0 and open_start else quotes if start == 0 else (*quotes, "\n")
        for end in range(start + 1, len(value) + 1):
            if reached[end] or (start == 0 and end == len(value)):
                continue
            rights = ("",) if end == len(value) and open_end else quotes if end == len(value) else (*quotes, "\\\n")
            piece = value[start:end]
            if any(f"{left}{piece}{right}" in text for left in lefts for right in rights):
                reached[end] = True
    return reached[-1]


# --- the tests --------------------------------------------------------------------------------


class Patterns:
    """One of the regular expressions matches the file."""

    def __init__(self, *patterns):
        self.patterns = [_compiled(pattern) for pattern in patterns]

    def __call__(self, text: PythonText) -> bool:
        return any(text.search(pattern) for pattern in self.patterns)


class Words:
    """One of `words` is in the file (identifiers that every hit spells)."""

    def __init__(self, words):
        self.words = tuple(words)

    def __call__(self, text: PythonText) -> bool:
        return any(text.has(word) for word in self.words)


class StringEquals:
    """A string constant of the file can be one of `values`."""

    def __init__(self, values):
        self.values = [(value, _first_piece(value), _last_piece(value)) for value in values]

    def __call__(self, text: PythonText) -> bool:
        return any(
            value in text.text or text.escapes_spell(value)
            or (text.search(first) and text.search(last) and _in_pieces(text.text, value))
            for value, first, last in self.values
        )


class StringEndings:
    """A string constant of the file can end with one of `endings`."""

    def __init__(self, endings):
        self.endings = [(ending, _compiled(f"{re.escape(ending)}{_QUOTE}"), _last_piece(ending)) for ending in endings]

    def __call__(self, text: PythonText) -> bool:
        return any(
            text.search(whole) or text.escapes_spell(ending) or (text.search(last) and _in_pieces(text.text, ending, open_start=True))
            for ending, whole, last in self.endings
        )


class StringStarts:
    """A string constant of the file can start with one of `starts`."""

    def __init__(self, starts):
        self.starts = [(start, _compiled(f"{_QUOTE}{re.escape(start)}"), _first_piece(start)) for start in starts]

    def __call__(self, text: PythonText) -> bool:
        return any(
            text.search(whole) or text.escapes_spell(start) or (text.search(first) and _in_pieces(text.text, start, open_end=True))
            for start, whole, first in self.starts
        )


class Keywords:
    """One of `names` is written as a keyword argument: `(name=` or `, name=`."""

    def __init__(self, names):
        self.patterns = [_compiled(rf"[(,]{_WIDE_GAP}{re.escape(name)}{_WIDE_GAP}=(?!=)") for name in names]

    def __call__(self, text: PythonText) -> bool:
        return any(text.search(pattern) for pattern in self.patterns)


class ImportStatements:
    """An import statement names a module whose first part is one of `roots`: right after
    `from`, or in the list after `import`."""

    def __init__(self, roots):
        self.roots = tuple(roots)

    def __call__(self, text: PythonText) -> bool:
        present = [root for root in self.roots if text.has(root)]
        if not present:
            return False
        names = "(?:" + "|".join(map(re.escape, present)) + ")"
        dotted = rf"\w+(?:{_GAP}\.{_GAP}\w+)*"
        return text.search(_compiled(rf"from{_GAP}{names}\b")) or text.search(
            _compiled(rf"import{_GAP}(?:{dotted}{_GAP}(?:as{_GAP}\w+{_GAP})?,{_GAP})*{names}\b")
        )


class Methods:
    """One of `names` is written after a dot (`x.item`), on its line or the line above."""

    def __init__(self, names):
        self.names = tuple(names)

    def __call__(self, text: PythonText) -> bool:
        return any(text.has(name) and text.chains_ending(name) for name in self.names)


class QualifiedNames:
    """A node's qualified name can be one of `names` (see the module docstring); with
    `assigned`, as the target of an assignment."""

    def __init__(self, names, assigned: bool = False):
        self.assigned = assigned
        self.by_last: dict[str, list[tuple[str, ...]]] = {}
        modules = set()
        for name in names:
            parts = tuple(name.split("."))
            self.by_last.setdefault(parts[-1], []).append(parts)
            if len(parts) > 1:
                modules.add(parts[:-1])
        # `from torch.cuda import graph [as g]`, where `graph` is the name's last part: the
        # names imported, in brackets (comments and all) or to the end of the statement.
        self.imports = [
            (_compiled(f"from{_WIDE_GAP}" + f"{_WIDE_GAP}\\.{_WIDE_GAP}".join(map(re.escape, module)) + _IMPORTED_NAMES), module)
            for module in sorted(modules)
        ]

    def __call__(self, text: PythonText) -> bool:
        for last, all_names in self.by_last.items():
            # Every part of a qualified name is written in the file: in the chain, an import or
            # an assignment that binds its first name.
            names = [parts for parts in all_names if all(text.has(part) for part in parts)]
            if not names:
                continue
            for chain, start, end in text.chains_ending(last):
                if chain is UNCERTAIN or (chain and any(_may_name(text, chain, parts) for parts in names)):
                    if not self.assigned or text.assigned_at(start, end):
                        return True
        if self.assigned:
            return False  # a name imported as itself is not an attribute that can be set
        for pattern, module in self.imports:
            wanted = [last for last, names in self.by_last.items()
                      if any(parts[:-1] == module and all(text.has(part) for part in parts) for parts in names)]
            if not wanted:
                continue
            for hit in pattern.finditer(text.text):
                if any(re.search(rf"\b{re.escape(last)}\b", hit.group(1)) for last in wanted):
                    return True
        return False


def _may_name(text: PythonText, chain: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    """Can the chain as written (`tc.graph`) have the qualified name `parts`: do its names
    after the first spell the end of `parts`, and can its first name stand for the rest (it
    is the rest's last part, imported as itself or taken as written, or a name the file
    binds to it)?"""
    if chain[0] == OPEN:
        # The chain may start on a line above: its first name may be one from the middle.
        chain = chain[1:]
        if len(parts) >= len(chain) and parts[len(parts) - len(chain):] == chain:
            return True
    tail = chain[1:]
    kept = len(parts) - len(tail)
    if kept < 1 or parts[kept:] != tail:
        return False
    return chain[0] == parts[kept - 1] or text.binds(chain[0], parts[kept - 1])


class CalledOrBound:
    """A function whose qualified name ends with one of `words` is called, or bound to
    another name that may be called: the word is followed by `(`, ends its statement or an
    import (`import ... as`), or is an element of an import list."""

    def __init__(self, words):
        self.patterns = [_compiled(re.escape(word) + r"\b" + _CALLED_OR_BOUND) for word in words]

    def __call__(self, text: PythonText) -> bool:
        return any(text.search(pattern) for pattern in self.patterns)


class AnyOf:
    def __init__(self, *tests):
        self.tests = tests

    def __call__(self, text: PythonText) -> bool:
        return any(test(text) for test in self.tests)


class AllOf:
    def __init__(self, *tests):
        self.tests = tests

    def __call__(self, text: PythonText) -> bool:
        return all(test(text) for test in self.tests)


# The keys of a `python` matcher's spec that the test below knows. A spec with any other key
# (a form of the matcher newer than the test) has no text test: its markers alone decide.
_KNOWN_KEYS = frozenset({
    "import", "not-import", "gate-named", "scope", "caught-only-by", "call", "method", "keywords",
    "positional", "within", "within-callees", "condition-method", "condition-call", "caught-by",
    "installed-by", "set", "values", "env", "value-regex", "reference", "not-argument-of",
    "not-in-tables", "not-named",
})


def text_test(spec: dict):
    """The text test of a `python` matcher's spec (rocmlint.python.matcher says what each key
    matches): any of its forms can match. None for a spec with a key it does not know."""
    if not set(spec) <= _KNOWN_KEYS:
        return None
    forms = []
    if "import" in spec:
        modules = spec["import"]
        # `import m`, `import os, m.sub as s`, `from m.sub import x` (and `from m import sub` for
        # a listed `m.sub`); `importlib.import_module("m.sub")`, `__import__("m")`.
        forms.append(AnyOf(
            ImportStatements(sorted({module.split(".")[0] for module in modules})),
            AllOf(Words(("import_module", "__import__")), StringStarts(modules)),
        ))
    if any(key in spec for key in ("call", "method", "condition-call", "condition-method")):
        # `functools.partial(name, ...)` writes the name as a call does. With `within`, the
        # call may be in a function the `with` body calls: in the same file all the same.
        calls = AnyOf(*([QualifiedNames(spec["call"] + spec.get("condition-call", []))]
                        if "call" in spec else [QualifiedNames(spec["condition-call"])] if "condition-call" in spec else []),
                      *([Methods(spec.get("method", []) + spec.get("condition-method", []))]
                        if "method" in spec or "condition-method" in spec else []))
        if "keywords" in spec and not spec.get("positional"):
            # Each listed argument is given by keyword (`mode=`), or in `**kwargs` whose dict
            # has the key: a string, or a keyword of `dict(mode=...)`.
            names = list(spec["keywords"])
            calls = AllOf(calls, AnyOf(Keywords(names), AllOf(Patterns(r"\*\*"), StringEquals(names))))
        forms.append(AllOf(QualifiedNames(spec["within"]), calls) if "within" in spec else calls)
    if "set" in spec:
        settings = spec["set"]
        # The key of `setattr(owner, key, v)`, `patch.object(owner, key, v)`, `owner.patch(key, v)`,
        # `owner.patch({key: v})` or `owner.patch(key=v)` ends with the setting's last part;
        # torch.compile(options={...}) sets torch._inductor.config.
        called = rf"{_WIDE_GAP}(?:\){_WIDE_GAP})*\("
        calls = [
            rf"setattr{called}",  # only the builtin, by that name
            rf"\.{_WIDE_GAP}patch{called}",
            # `patch.object` as written, or through `from ... patch import object`
            rf"patch{_WIDE_GAP}(?:\.{_WIDE_GAP}object\b|import\b)",
        ]
        written = Patterns(*calls)
        if any(name.startswith("torch._inductor.config.") for name in settings):
            # The dict of `torch.compile(options=...)` or `compile_fx(config_patches=...)`, also
            # given in `**kwargs` (rocmlint.python.index sets these for torch._inductor.config).
            keywords = ("options", "config_patches")
            written = AnyOf(written, Keywords(keywords), AllOf(Patterns(r"\*\*"), StringEquals(keywords)))
        lasts = sorted({name.rsplit(".", 1)[-1] for name in settings})
        forms.append(AnyOf(
            QualifiedNames(settings, assigned=True),
            AllOf(written, AnyOf(StringEndings(lasts), Keywords(lasts))),
        ))
    if "env" in spec:
        # `os.environ["X"] = v`, `.setdefault("X", v)`, `{"X": v}`; `.update(X=v)` spells it too.
        forms.append(StringEquals(spec["env"]))
    if "reference" in spec:
        forms.append(QualifiedNames(spec["reference"]))
    return AnyOf(*forms)


# The function matchers (rocmlint.python.rules) that have a text test, by the name the check
# file gives them: what each function must see in a file to match anything.
_FUNCTION_TESTS: dict[str, object] = {}


def function_test(function: str):
    """The text test of a `function` matcher (None: its check's markers are its only test)."""
    if not _FUNCTION_TESTS:
        from rocmlint.python.rules import AITER_OPS, TOOL_RUNNERS

        # A comparison with what a call of get_device_capability or get_device_properties returns.
        capability = CalledOrBound(("get_device_capability", "get_device_properties"))
        # A subprocess runner (or shutil.which) called with the tool's name.
        runners = QualifiedNames(TOOL_RUNNERS)
        # An import of aiter (a statement, or importlib.import_module("aiter...")), or a name
        # below torch.ops.aiter.
        aiter = AnyOf(
            ImportStatements(["aiter"]),
            AllOf(Words(("import_module",)), StringStarts(["aiter"])),
            QualifiedNames([AITER_OPS]),
        )
        # A call of an SDPA backend chooser, or of aten's cuDNN attention ops (their `.default` too).
        from rocmlint.python import rules

        cudnn = QualifiedNames([*rules._SDPA_CHOOSERS, *rules._CUDNN_ATTENTION_OPS,
                                *(f"{op}.default" for op in rules._CUDNN_ATTENTION_OPS)])
        _FUNCTION_TESTS.update({
            "rocmlint.python.rules:cudnn_only_attention": cudnn,
            "rocmlint.python.rules:aiter_at_import_time": aiter,
            "rocmlint.python.rules:capability_comparisons": capability,
            "rocmlint.python.rules:nvidia_smi_calls": runners,
            "rocmlint.python.rules:nvcc_calls": runners,
        })
    return _FUNCTION_TESTS.get(function)
