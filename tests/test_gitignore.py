"""rocmlint.files.gitignore matches gitignore patterns as git does, in linear time."""

import os
import shutil
import subprocess
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rocmlint.files.gitignore import PatternList, parse_pattern

PATHS = [
    "a.py", "b.py", "ab.py", "aab.py", "x/a.py", "x/y/a.py", "a/b.py", "a/x/b.py", "b/a/c.py", "ba.py", ".py",
    "a", "x/ab", "[a].py", "a b.py", "a!.py", "#a.py", "x/a/b/a.py", "aa/bb/ab.py", "z/aaaa.py",
]


def _excluded(patterns: PatternList, path: str) -> bool:
    """As git decides for a file: a folder above it that is ignored ignores it."""
    parts = path.split("/")
    for depth in range(1, len(parts) + 1):
        decision = patterns.decide("/".join(parts[:depth]), depth < len(parts))
        if decision is not None and decision.ignored:
            return True
    return False


def _git_ignored(tmp_path, pattern: str) -> set[str]:
    (tmp_path / ".gitignore").write_text(pattern + "\n", encoding="utf-8")
    proc = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin", "-z"],
        cwd=tmp_path, input="\0".join(PATHS).encode() + b"\0", capture_output=True,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return {p.decode() for p in proc.stdout.split(b"\0") if p}


pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("ignore")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


FIXED = [
    "a**/a", "aa**/b", "[ab]**/a", "a*b**/a", "a**", "**\\/b",  # `**` right after the leading plain text; an escaped slash
    "*.py", "a*", "/a.py", "x/", "x/*", "x/**", "**/a.py", "a/**/b.py", "**", "***", "*a*a*a*b", "[ab].py", "[!a]*.py",
    "[a-b]b.py", "[z-a].py", "[[:alpha:]].py", "\\[a\\].py", "a\\ b.py", "\\!a.py", "\\#a.py", "!", "\\", "?.py",
    "x/y", "/x/", "a/", "a//", "x//", "**/x/**", "aa/**/ab.py", "*/a.py", "x/**/a.py", "a/*", "[", "a[b", ".py", "*.p[xy]",
    # Literal text at the start, the end and between wildcards, overlapping or not (the quick
    # test of what a path must hold before the general matcher runs).
    "a*a", "a*a.py", "ab*b.py", "a?b*", "*a*b.py", "x/**/a*.py", "*a/b*", "a*b*a*", "a*.py*", "aa*aa",
    # `*` and then characters of a fixed width.
    "*?.py", "*[ab]", "*[!a].py", "*/a?py", "*/?", "*?", "*a/[ab].py",
]


@pytest.mark.parametrize("pattern", FIXED)
def test_same_as_git(repo, pattern):
    ours = {p for p in PATHS if _excluded(PatternList([pattern], "", "t"), p)}
    assert ours == _git_ignored(repo, pattern), pattern


@settings(max_examples=int(os.environ.get("ROCMLINT_IGNORE_EXAMPLES", "150")), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(["a", "b", "x", "*", "**", "?", "/", ".py", "[ab]", "[!a]", "!", "\\", " "]), min_size=1, max_size=6))
def test_generated_patterns_same_as_git(repo, parts):
    pattern = "".join(parts)
    if pattern.startswith("#") or "\n" in pattern:
        return
    ours = {p for p in PATHS if _excluded(PatternList([pattern], "", "t"), p)}
    assert ours == _git_ignored(repo, pattern), pattern


LIST_PATTERNS = ["*.py", "!*.py", "a", "!a", "a.py", "!a.py", "x/", "!x/", "*b", "!*b", "a*", "x/*", "**/a.py", "*", "[ab].py", "!ab.py", "*?"]


@settings(max_examples=int(os.environ.get("ROCMLINT_IGNORE_EXAMPLES", "150")), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(LIST_PATTERNS), min_size=2, max_size=8))
def test_lists_of_patterns_same_as_git(repo, patterns):
    # The last matching pattern decides: a list asks first only the patterns that can match
    # the path's last character, and must still find the last one that matches.
    ours = {p for p in PATHS if _excluded(PatternList(patterns, "", "t"), p)}
    assert ours == _git_ignored(repo, "\n".join(patterns)), patterns


def test_negation_and_last_match_wins():
    patterns = PatternList(["*.py", "!keep.py", "keep.py", "!keep.py"], "", "t")
    assert patterns.decide("keep.py", False).ignored is False
    assert patterns.decide("other.py", False).ignored is True


def test_matching_time_is_linear_in_the_name():
    pattern = parse_pattern("*a*a*a*a*a*a*a*a*b")
    name = "a" * 5000
    started = time.perf_counter()
    assert not pattern.matches(name, False)
    # A backtracking matcher needs on the order of 5000**8 steps here; this one 5000 * 17.
    assert time.perf_counter() - started < 5
