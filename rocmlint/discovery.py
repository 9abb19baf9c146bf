"""Which files a scan reads.

Walking a directory skips version-control folders, virtual environments (any folder with a
`pyvenv.cfg`), caches and build output, whatever `.gitignore` files ignore (each one
relative to its own folder, as git reads them), and the `exclude` patterns of the
configuration and the command line. A file named explicitly on the command line is always
scanned if rocmlint knows its language.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pathspec

from rocmlint.languages import language_of

DEFAULT_EXCLUDED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".bzr", ".venv", "venv", ".tox", ".nox", ".eggs", ".mypy_cache",
        ".pytest_cache", ".ruff_cache", "__pycache__", "__pypackages__", "node_modules", "build",
        "dist", "_build", "buck-out", ".direnv",
    }
)


@dataclass(frozen=True)
class Target:
    path: str  # as shown to the user: "/"-separated, relative to the cwd when under it
    language: str


def relative_to_cwd(path: str | Path) -> str | None:
    """The "/"-separated path relative to the current directory, or None when it is outside."""
    absolute, cwd = os.path.abspath(path), os.getcwd()
    if absolute.startswith(cwd + os.sep):
        return Path(os.path.relpath(absolute, cwd)).as_posix()
    return None


def _display(path: Path) -> str:
    return relative_to_cwd(path) or path.as_posix()


def _read_gitignore(directory: Path) -> pathspec.PathSpec | None:
    gitignore = directory / ".gitignore"
    if not gitignore.is_file():
        return None
    try:
        lines = gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


class Excludes:
    """User `exclude` patterns, gitignore-style, relative to `root`."""

    def __init__(self, patterns: tuple[str, ...], root: Path):
        self.root = root.resolve()
        self.spec = pathspec.GitIgnoreSpec.from_lines(patterns) if patterns else None

    def excluded(self, path: Path, is_dir: bool) -> bool:
        if self.spec is None:
            return False
        try:
            relative = path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            relative = path.as_posix()
        return self.spec.match_file(relative + "/" if is_dir else relative)


def discover(paths: list[Path], excludes: Excludes) -> Iterator[Target]:
    """Yield every file to scan under `paths`, in a stable order, each once."""
    seen: set[str] = set()
    for given in paths:
        if given.is_file() or (given.exists() and not given.is_dir()):
            language = language_of(str(given))
            if language and str(given.resolve()) not in seen:
                seen.add(str(given.resolve()))
                yield Target(_display(given), language)
            continue
        yield from _walk(given, excludes, seen)


def _walk(top: Path, excludes: Excludes, seen: set[str]) -> Iterator[Target]:
    # Stack of (directory, gitignore specs that apply: [(spec, base directory)])
    specs_for: dict[str, list[tuple[pathspec.PathSpec, Path]]] = {}
    for directory, dirnames, filenames in os.walk(top):
        here = Path(directory)
        parent_specs = specs_for.get(str(here.parent), []) if here != top else []
        own = _read_gitignore(here)
        specs = parent_specs + ([(own, here)] if own else [])
        specs_for[directory] = specs

        def ignored(path: Path, is_dir: bool) -> bool:
            for spec, base in specs:
                relative = path.relative_to(base).as_posix() + ("/" if is_dir else "")
                if spec.match_file(relative):
                    return True
            return excludes.excluded(path, is_dir)

        kept = []
        for name in sorted(dirnames):
            sub = here / name
            if name in DEFAULT_EXCLUDED_DIRS or name.endswith(".egg-info"):
                continue
            if (sub / "pyvenv.cfg").exists() or ignored(sub, True):
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            language = language_of(os.path.join(directory, name))
            if language is None:
                continue
            path = here / name
            if ignored(path, False):
                continue
            key = str(path.resolve())
            if key in seen:
                continue
            seen.add(key)
            yield Target(_display(path), language)
