"""CODEOWNERS: who owns which files, so that the porting report can count findings per team.

GitHub reads the first of `.github/CODEOWNERS`, `CODEOWNERS` and `docs/CODEOWNERS` at the
repository root; each line is a gitignore-style pattern and its owners, and the last matching
line decides (GitHub docs, "About code owners"). Patterns are read with the one gitignore matcher
(rocmlint.files.gitignore); a `!pattern` means nothing in CODEOWNERS and is left out, as
GitHub does.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from rocmlint.files.gitignore import Pattern, parse_pattern

PLACES = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")


@dataclass(frozen=True)
class CodeOwners:
    path: Path
    root: Path  # the folder patterns are relative to
    rules: tuple[tuple[Pattern, tuple[str, ...]], ...]

    def owners_of(self, absolute: str) -> tuple[str, ...]:
        """The owners of a file (an absolute path); () when no line matches it, or when the last
        line that matches names no owner."""
        relative = os.path.relpath(absolute, self.root).replace(os.sep, "/")
        if relative.startswith("../") or relative == "..":
            return ()
        parts = relative.split("/")
        for pattern, owners in reversed(self.rules):
            # A pattern matches the file, or a folder above it (`docs/` owns what is inside).
            for depth in range(len(parts), 0, -1):
                if pattern.matches("/".join(parts[:depth]), depth < len(parts)):
                    return owners
        return ()


def parse_codeowners(text: str, path: Path, root: Path) -> CodeOwners:
    rules = []
    for number, line in enumerate(text.splitlines(), start=1):
        body = line.split(" #", 1)[0].strip()  # an owner list may end with a comment
        if not body or body.startswith("#"):
            continue
        words = body.split()
        pattern = parse_pattern(words[0], number)
        if pattern is None or pattern.negated:
            continue
        rules.append((pattern, tuple(words[1:])))
    return CodeOwners(path, root, tuple(rules))


def find_codeowners(scan_root: Path) -> CodeOwners | None:
    """The CODEOWNERS of the repository that holds `scan_root`: looked for at the scan root and
    each folder above it up to the git top level (only the scan root outside git)."""
    from rocmlint.report.locations import git_top_level

    top = git_top_level(scan_root)
    folders = [scan_root]
    if top is not None and top != scan_root:
        folders += [folder for folder in scan_root.parents if folder == top or top in folder.parents]
    for folder in folders:
        for place in PLACES:
            candidate = folder / place
            if candidate.is_file():
                try:
                    text = candidate.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                return parse_codeowners(text, candidate, folder)
    return None
