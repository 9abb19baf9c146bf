"""gitignore patterns, read and matched as git reads and matches them, in linear time.

The rules are git's (gitignore(5) and git's wildmatch with WM_PATHNAME):
  - blank lines match nothing; `#` starts a comment, `\\#` is a literal `#`; trailing spaces
    are dropped unless escaped with a backslash;
  - `!` negates: a later negated pattern re-includes what an earlier one ignored; `\\!` is a
    literal `!`;
  - a trailing `/` matches directories only;
  - a pattern with a `/` at its start or in its middle is relative to the directory of the
    file that holds it; any other pattern matches a name at any depth below it;
  - `*` matches anything but `/`, `?` one character but `/`, `[...]` one character of a set
    (`!` or `^` negates, `a-z` ranges, `[:alpha:]` classes; never `/`); `**` between slashes
    (or at either end) matches across directories: `**/x`, `a/**/b`, `a/**`;
  - what git cannot read matches nothing and is no error: an unclosed `[`, a trailing `\\`,
    a reversed range `[z-a]`, a `!` alone.

Matching simulates all the ways a pattern can match at once (a set of positions in the
pattern per character of the path), so its time is the path's length times the pattern's,
whatever the pattern: `*a*a*a*a*a*a*a*a*b`, which makes backtracking matchers take minutes
on a long name, costs no more than any other pattern of its length.
"""

from __future__ import annotations

from rocmlint.records import record


# Token kinds of a compiled pattern.
_LITERAL, _ONE, _SET, _STAR, _ANYTHING, _DIRECTORIES = range(6)

_CLASSES = {
    "alnum": str.isalnum,
    "alpha": str.isalpha,
    "blank": lambda c: c in " \t",
    "cntrl": lambda c: ord(c) < 32 or ord(c) == 127,
    "digit": lambda c: "0" <= c <= "9",
    "graph": lambda c: c.isprintable() and not c.isspace(),
    "lower": str.islower,
    "print": str.isprintable,
    "punct": lambda c: c.isascii() and c.isprintable() and not c.isalnum() and not c.isspace(),
    "space": str.isspace,
    "upper": str.isupper,
    "xdigit": lambda c: c in "0123456789abcdefABCDEF",
}


class _Invalid(Exception):
    """A pattern git's wildmatch aborts on: it matches nothing."""


@record
class _CharSet:
    negated: bool
    chars: frozenset
    ranges: tuple
    classes: tuple

    def __contains__(self, ch: str) -> bool:
        hit = ch in self.chars or any(low <= ch <= high for low, high in self.ranges) or any(f(ch) for f in self.classes)
        return hit != self.negated


def _bracket(pattern: str, i: int) -> tuple[_CharSet, int]:
    """The set opened by `[` at pattern[i - 1]; returns it and the index after its `]`."""
    n = len(pattern)
    negated = i < n and pattern[i] in "!^"
    if negated:
        i += 1
    chars: set[str] = set()
    ranges: list[tuple[str, str]] = []
    classes: list = []
    first = True
    while True:
        if i >= n:
            raise _Invalid
        ch = pattern[i]
        if ch == "]" and not first:
            return _CharSet(negated, frozenset(chars), tuple(ranges), tuple(classes)), i + 1
        first = False
        if ch == "[" and pattern.startswith("[:", i):
            close = pattern.find(":]", i + 2)
            if close < 0:
                raise _Invalid
            name = pattern[i + 2 : close]
            if name not in _CLASSES:
                raise _Invalid
            classes.append(_CLASSES[name])
            i = close + 2
            continue
        if ch == "\\":
            i += 1
            if i >= n:
                raise _Invalid
            ch = pattern[i]
        if i + 2 < n and pattern[i + 1] == "-" and pattern[i + 2] != "]":
            high = pattern[i + 2]
            step = 3
            if high == "\\":
                if i + 3 >= n:
                    raise _Invalid
                high = pattern[i + 3]
                step = 4
            ranges.append((ch, high))  # a reversed range holds nothing, as in git
            i += step
            continue
        chars.add(ch)
        i += 1


def _tokens(pattern: str) -> tuple:
    """Compile a wildmatch pattern (WM_PATHNAME) to tokens."""
    tokens: list = []
    i, n = 0, len(pattern)
    plain_prefix = next((k for k, c in enumerate(pattern) if c in "*?[\\"), n)
    while i < n:
        ch = pattern[i]
        if ch == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            double = j - i >= 2
            # git compares a pattern's leading plain text on its own and matches the rest from
            # there, so `**` right after that text counts as starting a segment too: `a**/a`
            # ignores `aa` (`a`, then `**/` as zero directories, then `a`); `[ab]**/a` does not.
            starts_segment = i == 0 or pattern[i - 1] == "/" or i == plain_prefix
            if double and starts_segment and pattern[j : j + 1] == "/":
                tokens.append((_DIRECTORIES,))  # `**/`: zero or more whole directories
                i = j + 1
                continue
            if double and starts_segment and pattern[j : j + 2] == "\\/":
                # `**\/`: git's `**` crosses directories here too, but without the shortcut
                # for none: anything, then the escaped slash read as a literal one.
                tokens.append((_ANYTHING,))
                i = j
                continue
            if double and starts_segment and j == n:
                tokens.append((_ANYTHING,))  # `**` at the end: everything below
                i = j
                continue
            tokens.append((_STAR,))
            i = j
        elif ch == "?":
            tokens.append((_ONE,))
            i += 1
        elif ch == "[":
            charset, i = _bracket(pattern, i + 1)
            tokens.append((_SET, charset))
        elif ch == "\\":
            if i + 1 >= n:
                raise _Invalid  # a trailing backslash matches nothing in git
            tokens.append((_LITERAL, pattern[i + 1]))
            i += 2
        else:
            tokens.append((_LITERAL, ch))
            i += 1
    return tuple(tokens)


def _closure(states: set[int], tokens: tuple) -> set[int]:
    """Add the states reachable without reading a character. A state is 2*i (before token i)
    or 2*i + 1 (inside a directory name read by the `**/` token i)."""
    stack = list(states)
    count = len(tokens)
    while stack:
        state = stack.pop()
        index, inside = divmod(state, 2)
        if not inside and index < count and tokens[index][0] in (_STAR, _ANYTHING, _DIRECTORIES):
            following = 2 * (index + 1)
            if following not in states:
                states.add(following)
                stack.append(following)
    return states


def _wildmatch(tokens: tuple, text: str) -> bool:
    states = _closure({0}, tokens)
    count = len(tokens)
    for ch in text:
        following: set[int] = set()
        for state in states:
            index, inside = divmod(state, 2)
            if index == count:
                continue
            kind = tokens[index][0]
            if kind == _LITERAL:
                if ch == tokens[index][1]:
                    following.add(2 * (index + 1))
            elif kind == _ONE:
                if ch != "/":
                    following.add(2 * (index + 1))
            elif kind == _SET:
                if ch != "/" and ch in tokens[index][1]:
                    following.add(2 * (index + 1))
            elif kind == _STAR:
                if ch != "/":
                    following.add(state)
            elif kind == _ANYTHING:
                following.add(state)
            else:  # _DIRECTORIES: a `/` ends one directory name
                following.add(2 * index if ch == "/" else 2 * index + 1)
        if not following:
            return False
        states = _closure(following, tokens)
    return 2 * count in states


def _literal_runs(tokens: tuple) -> tuple[str, str, tuple[str, ...]]:
    """(the text a match starts with, the text it ends with, texts it holds between them): the
    runs of literal characters of a pattern, which any path it matches holds as they are, in
    that order. Empty where the pattern starts or ends with a wildcard."""
    runs: list[str] = []
    current: list[str] = []
    for token in tokens:
        if token[0] == _LITERAL:
            current.append(token[1])
        else:
            runs.append("".join(current))
            current = []
    runs.append("".join(current))
    if len(runs) == 1:  # all literal: `head` alone says it
        return runs[0], "", ()
    return runs[0], runs[-1], tuple(r for r in runs[1:-1] if r)


@record
class Pattern:
    text: str  # the line as written
    line: int  # 1-based line in its file
    negated: bool
    directory_only: bool
    anchored: bool  # matched against the whole path below its base, not the name alone
    tokens: tuple

    def __post_init__(self) -> None:
        # What a path must hold to match at all: most paths are told apart by these alone,
        # without the general matcher (a scan asks each path of every pattern of its .gitignore).
        head, tail, middle = _literal_runs(self.tokens)
        object.__setattr__(self, "_head", head)
        object.__setattr__(self, "_tail", tail)
        object.__setattr__(self, "_middle", middle)
        object.__setattr__(self, "_literal", all(t[0] == _LITERAL for t in self.tokens))
        # `*` and then characters of a fixed width (`*.py[cod]`, `*.so.?`): the end of the path
        # compared character by character.
        fixed = self.tokens[0][0] == _STAR and all(t[0] in (_LITERAL, _ONE, _SET) for t in self.tokens[1:])
        object.__setattr__(self, "_fixed_tail", self.tokens[1:] if fixed else None)

    def matches(self, relative: str, is_dir: bool) -> bool:
        """Does the pattern match `relative` ("/"-separated, below the pattern's base)?"""
        return self._matches(relative, relative.rsplit("/", 1)[-1], is_dir)

    def _matches(self, relative: str, name: str, is_dir: bool) -> bool:
        """`matches`, with the path's last name (what a pattern without a slash is matched on)."""
        if self.directory_only and not is_dir:
            return False
        subject = relative if self.anchored else name
        if self._literal:
            return subject == self._head
        if not (subject.startswith(self._head) and subject.endswith(self._tail)) or len(subject) < len(self._head) + len(self._tail):
            return False
        if self._middle and any(run not in subject for run in self._middle):
            return False
        tail = self._fixed_tail
        if tail is not None:
            width = len(tail)
            if len(subject) < width or "/" in subject[: len(subject) - width]:
                return False
            for token, ch in zip(tail, subject[len(subject) - width :]):
                kind = token[0]
                if kind == _LITERAL:
                    if ch != token[1]:
                        return False
                elif ch == "/" or (kind == _SET and ch not in token[1]):
                    return False
            return True
        return _wildmatch(self.tokens, subject)


def parse_pattern(line: str, number: int = 0) -> Pattern | None:
    """One gitignore line as a Pattern, or None when it matches nothing (blank, comment,
    or a pattern git cannot read)."""
    text = line.rstrip("\n").rstrip("\r")
    # Trailing spaces are dropped unless the last one is escaped.
    stripped = text.rstrip(" ")
    if len(stripped) < len(text) and stripped.endswith("\\") and not stripped.endswith("\\\\"):
        stripped += " "
    body = stripped
    if not body or body.startswith("#"):
        return None
    negated = body.startswith("!")
    if negated:
        body = body[1:]
    elif body.startswith("\\!") or body.startswith("\\#"):
        body = body[1:]
    directory_only = body.endswith("/") and not body.endswith("\\/")
    if directory_only:
        body = body[:-1]  # one slash only, as git: `a//` matches nothing
    if not body:
        return None
    anchored = "/" in body
    if body.startswith("/"):
        body = body[1:]
    if not body:
        return None
    try:
        tokens = _tokens(body)
    except _Invalid:
        return None
    return Pattern(text, number, negated, directory_only, anchored, tokens)


@record
class Decision:
    ignored: bool
    pattern: Pattern
    source: str  # the file (or option) that holds the pattern


class PatternList:
    """The patterns of one gitignore file (or option), relative to `base` (an absolute
    "/"-separated directory path, or "" for patterns relative to no directory)."""

    def __init__(self, lines, base: str, source: str):
        self.base = base.rstrip("/")
        self.source = source
        patterns = (parse_pattern(line, number) for number, line in enumerate(lines, start=1))
        self.patterns = [p for p in patterns if p is not None]
        self._by_last_character: dict[str, list[Pattern]] = {}

    def decide(self, relative: str, is_dir: bool) -> Decision | None:
        """The last pattern that matches decides; None when none does."""
        name = relative.rsplit("/", 1)[-1]
        for pattern in self._may_match(relative[-1:]):
            if pattern._matches(relative, name, is_dir):
                return Decision(not pattern.negated, pattern, self.source)
        return None

    def _may_match(self, last: str) -> list[Pattern]:
        """The patterns that may match a path ending with the character `last`, last one first:
        a pattern that ends with a literal character matches only paths that end with it (the
        name a pattern without a slash is matched on ends as the path does). A .gitignore of
        a hundred patterns is asked of every path of the tree; most patterns end with a
        literal character."""
        found = self._by_last_character.get(last)
        if found is None:
            found = self._by_last_character[last] = [
                p for p in reversed(self.patterns) if (p._head if p._literal else p._tail)[-1:] in ("", last)
            ]
        return found

    def leaves_out(self, relative: str, is_dir: bool) -> Decision | None:
        """The pattern that leaves out `relative` ("/"-separated, below the base), or None. As
        in git, a path in a left-out folder is left out whatever the later patterns say: the
        folders are asked first."""
        parts = relative.split("/")
        for depth in range(1, len(parts) + 1):
            directory = depth < len(parts)
            decision = self.decide("/".join(parts[:depth]), True if directory else is_dir)
            if decision is not None and decision.ignored:
                return decision
        return None

    def relative(self, absolute: str) -> str | None:
        """`absolute` below this list's base, or None when it is not below it."""
        if not self.base:
            return absolute.lstrip("/")
        prefix = self.base + "/"
        return absolute[len(prefix) :] if absolute.startswith(prefix) else None


def decide(lists: list[PatternList], absolute: str, is_dir: bool) -> Decision | None:
    """What a stack of pattern lists says of a path: the deepest list with a matching
    pattern decides (a nested .gitignore overrides its parents), as in git. `lists` runs
    from the outermost to the innermost."""
    for patterns in reversed(lists):
        relative = patterns.relative(absolute)
        if relative is None or not relative:
            continue
        decision = patterns.decide(relative, is_dir)
        if decision is not None:
            return decision
    return None
