"""What the language server knows between requests: each open document's last result, the
project models of the workspace, and when what was read from disk must be read again.

Every check goes through the engine's text face (rocmlint.stdin.scan_text), as
`rocmlint scan - --stdin-filename PATH` does, so the editor shows what the scanner reports
for the same text: the nearest configuration, per-file-ignores, preview, gates and the
project pass. Three things are kept, because the server lives as long as the editor:

- the result of each document, used again while neither its text nor anything read from disk
  (a configuration or build file) has changed: hover, code actions and commands on an
  unchanged document check nothing; and, for a document whose text is the file's as saved,
  the per-file result kept on disk as `rocmlint scan` keeps it (rocmlint.files.result_cache),
  so that a file opened again after a restart is not checked again;
- the project model of each project root (rocmlint.project), built the first time a C/C++
  file of the project has a hit and used for every later check, and the import graph of its
  Python modules (which side of a dispatcher imports a module), built the first time a Python
  file of a project that builds for AMD has a hit;
- what the engine caches about the tree (the nearest configuration of a folder, where a
  project starts, whether it builds for AMD): forgotten, with the models and import graphs,
  when a configuration or build file changes; all but the models when a Python file is saved
  or changes on disk.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from rocmlint.files.project_start import BUILD_FILE_NAMES
from rocmlint.config import CONFIG_FILE_NAMES, ConfigError
from rocmlint.files.tree import forget_what_was_read_from_disk
from rocmlint.findings import Problem, ScanResult
from rocmlint.settings import CommandLine, Settings

# Files whose change makes every open document's result stale: the configuration, and what
# the project model reads (build files, CMake modules, the submodule list).
CONFIG_NAMES = frozenset(CONFIG_FILE_NAMES)
PROJECT_NAMES = frozenset(BUILD_FILE_NAMES) | {".gitmodules"}
PROJECT_SUFFIXES = (".cmake",)


def watched_file_kind(path: str) -> str | None:
    """"config" for a configuration file, "project" for a file the project model reads,
    "python" for a Python module (the import graphs read them), else None."""
    name = os.path.basename(path)
    if name in CONFIG_NAMES:
        return "config"
    if name in PROJECT_NAMES or name.endswith(PROJECT_SUFFIXES):
        return "project"
    if name.endswith(".py"):
        return "python"
    return None


@dataclass
class Checked:
    """One document's result: for the text it was computed from."""

    path: str
    text: str
    result: ScanResult
    generation: int
    lines: list[str] = field(default_factory=list)  # the text's lines, as the engine counts them

    def __post_init__(self) -> None:
        self.lines = self.text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


class DocumentChecker:
    """Checks document texts, keeping results and project models between checks (see the
    module docstring). Not thread-safe: the server calls it from one thread."""

    def __init__(self, preview: bool | None = None, use_cache: bool = True, cache_dir: str | None = None):
        self.settings = Settings(CommandLine(preview=preview))
        # Per-file results kept on disk as `rocmlint scan` keeps them (rocmlint.files.result_cache),
        # for documents whose text is the file's as saved: a document opened again after a
        # restart is not checked again. The text being typed is never kept there (an entry a
        # keystroke). `cache_dir`: that folder; default: the scan's default for the project.
        self.use_cache = use_cache
        self.cache_dir = cache_dir
        self._cache_dirs: dict[str, str | None] = {}
        self.models: dict[str, object] = {}  # project root -> ProjectModel
        self.import_graphs: dict[str, object] = {}  # project root -> ImportGraph
        # Counts the changes to files read from disk: a result of an older generation is stale.
        self.generation = 0
        self._kept: dict[str, Checked] = {}
        self.checks_run = 0  # how many texts went through the engine (kept results are not counted)
        # The workspace folders: outside git, a project does not start above them (as for the
        # folders given to `rocmlint scan`).
        self.workspace_folders: list[str] = []

    def check(self, path: str, text: str) -> Checked:
        kept = self._kept.get(path)
        if kept is not None and kept.generation == self.generation and kept.text == text:
            return kept
        from rocmlint.engine import SelectionError
        from rocmlint.files.languages import language_of
        from rocmlint.stdin import scan_text

        if language_of(path) is None:
            # The editor may send any file it has open; one rocmlint does not read is not a
            # problem to show there (the scanner says so only of a file named to it).
            checked = self._kept[path] = Checked(path, text, ScanResult(), self.generation)
            return checked
        self.checks_run += 1
        # A lone surrogate (JSON can carry one) is not UTF-8: the engine says so, line and byte.
        data = text.encode("utf-8", "surrogatepass")
        try:
            cache_dir = self._cache_dir(path) if self.use_cache and _saved_as(path, data) else None
            result = scan_text(
                data, path, self.settings, models=self.models, import_graphs=self.import_graphs,
                scan_roots=self.workspace_folders or None, cache_dir=cache_dir,
            )
        except (ConfigError, SelectionError) as exc:
            result = ScanResult(problems=[Problem(path, f"configuration error: {exc}")])
        checked = Checked(path, text, result, self.generation)
        self._kept[path] = checked
        return checked

    def _cache_dir(self, path: str) -> str | None:
        """Where results are kept for the file at `path`: the folder given, else the scan's
        default for its configuration's root; None where none may be used (refusal)."""
        from rocmlint.files.result_cache import default_directory, refusal

        if self.cache_dir is not None:
            chosen: str | None = self.cache_dir
        else:
            root = self.settings.config_for(path).root
            found = default_directory(root)
            chosen = str(found) if found is not None else None
        if chosen is None:
            return None
        if chosen not in self._cache_dirs:
            self._cache_dirs[chosen] = None if refusal(chosen) else chosen
        return self._cache_dirs[chosen]

    def forget(self, path: str) -> None:
        self._kept.pop(path, None)

    def files_changed(self, paths: list[str]) -> bool:
        """Files changed on disk. Returns whether any of them makes kept results stale: then
        the open documents must be checked again. A configuration or build file: everything
        read from disk is read again. A Python module: the import graphs are built again (a
        changed import may change which side of a dispatcher imports a module), and what the
        engine caches about the tree is forgotten."""
        kinds = {watched_file_kind(p) for p in paths} - {None}
        if not kinds:
            return False
        self.generation += 1
        self.import_graphs.clear()
        if kinds - {"python"}:
            # The project model is built again only for these: for a Python module it would
            # be a read of the whole project a save, for the rare kernel a setup script or a
            # JIT call names (rocmlint.project.python_jit).
            self.models.clear()
        forget_what_was_read_from_disk()
        return True

    def set_preview(self, preview: bool | None) -> None:
        if preview != self.settings.command_line.preview:
            self.settings = Settings(CommandLine(preview=preview))
            self.generation += 1


def _saved_as(path: str, data: bytes) -> bool:
    """Whether the regular file at `path` holds `data` now (read only when the sizes agree;
    a pipe or a device is never opened)."""
    import stat

    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size != len(data):
            return False
        with open(path, "rb") as handle:
            return handle.read() == data
    except (OSError, ValueError):
        return False
