"""Which Python modules of a project only code for one GPU stack imports.

A dual-vendor project keeps its NVIDIA-only modules (CUTLASS and DeepGEMM back ends, Hopper-only
kernels) apart and imports them only on the CUDA side of a dispatcher:

    if current_platform.is_rocm():
        from .rocm_attention import RocmBackend
    else:
        from .cutlass_mla import CutlassBackend

Nothing in `cutlass_mla.py` says so; its importers do. For a module with findings, this pass
finds every import of it in the project (a cheap text pass over the project's Python files,
then the importing files parsed), and the module counts as code for one GPU stack where it has
importers and no import of it runs on AMD (rocmlint.python.gates.not_on_amd: the NVIDIA side
of a platform test, after an exit taken on AMD, a test skipped on AMD; or a module for NVIDIA
by its name), or every import that may run there sits in a module that is itself imported only
that way (followed a few levels). The same question is asked the other way round for checks
whose hazard is on NVIDIA (ROCm-only code, such as AMD's aiter, reached by an NVIDIA run):
there a module never runs on NVIDIA where every import of it sits on the AMD side of a platform
test (rocmlint.python.gates.not_on_nvidia), inside `try`/`except`, or in a module that imports
aiter at its top level (which NVIDIA cannot import); names are not trusted that way round. A module that imports an NVIDIA-only package, or an extension
only an NVIDIA-only package of the project builds, at its top level cannot be imported on AMD. A module that something names in a string (a lazy registry, an entry
point), a package's `__init__.py`, a test file, a script run as `__main__`, and a module
nothing imports stay unknown, and their findings are reported.
The pass reads files and never runs or imports them.
"""

from __future__ import annotations

import ast
import os
import re

from rocmlint.build.project_root import SKIPPED_FOLDERS, VENDOR_DIRECTORIES
from rocmlint.files.tree import ProjectFiles, note_tree

_MAX_PYTHON_FILES = 20_000
_MAX_DEPTH = 6
# `from X import a, b`, `from X import (a,\n b)`, `import a.b as c, d`, each at the start of a
# line. Searched in the text with a newline put before it: a pattern that starts with a literal
# newline is found much faster than one anchored with `^` in multi-line mode.
_IMPORT = re.compile(
    r"\n[ \t]*(?:from[ \t]+(?P<base>[.\w]+)[ \t]+import[ \t]+(?P<names>\([^)]*\)|[^\n#;]+)|import[ \t]+(?P<modules>[^\n#;]+))",
)
# Third-party modules that exist only for NVIDIA GPUs: a module that imports one at its top level
# (outside any `try`, `if` or function) fails to import on AMD, and none of its code runs there.
NVIDIA_ONLY_MODULES = {
    "cutlass": "NVIDIA's CUTLASS Python DSL (CuTe DSL), which compiles for NVIDIA GPUs only",
    "deep_gemm": "DeepGEMM, whose kernels are built with CUDA for Hopper and Blackwell GPUs",
    "flash_attn_interface": "FlashAttention-3, built with CUDA 12.3+ for Hopper GPUs only",
}
_TOP_LEVEL_NVIDIA_IMPORT = re.compile(
    r"^(?:import|from)[ \t]+(?P<module>%s)(?![\w])" % "|".join(map(re.escape, NVIDIA_ONLY_MODULES)), re.M
)
# `CUDAExtension("fused_dense_lib", ...)` / `CUDAExtension(name="fused_dense_lib", ...)`.
_CUDA_EXTENSION_NAME = re.compile(r"""CUDAExtension\(\s*(?:name\s*=\s*)?["']([\w.]+)["']""")
# A module that imports AMD's aiter at its top level, outside any `try`, `if` or function, fails
# to import on NVIDIA machines (ImportError without aiter, RuntimeError with it installed).
_TOP_LEVEL_AITER_IMPORT = re.compile(r"^(?:import|from)[ \t]+(?P<module>aiter)(?![\w])", re.M)
_TEST_FILE = re.compile(r"^(test_.*|.*_test|conftest)\.py$")
# ImportGraph._gate's answer for a module reached only through one still being decided.
_BACK = "(imported back)"
# What a file that loads a module from a name it builds calls (importlib.import_module,
# __import__, importlib.util's spec loaders, a lazy module such as transformers' _LazyModule, a
# module-level __getattr__ that imports on first use), searched as plain text.
_LOADERS_BY_NAME = ("import_module", "__import__", "spec_from", "LazyModule", "def __getattr__")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_DOTTED_WORDS = re.compile(r"\w+(?:\.\w+)+")
# A name, maybe dotted or relative, right after a quote and right before a quote or a colon.
_QUOTED_NAME = re.compile(r"""["'](\.*[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?=["':])""")


class ImportGraph:
    """The imports between the Python modules under one folder (a project's root, or the top
    of a package with no build file), read once per scan."""

    def __init__(self, root: str, facts: list | None = None):
        """`facts`: what file_facts gives for each of python_files(root), in that order, read
        by other processes (rocmlint.project.gating.read_import_facts); by default the files
        are read here."""
        self.root = os.path.abspath(root)
        self.texts: dict[str, str] = {}
        # module name -> [(importing file, line of the import statement)]
        self.importers: dict[str, list[tuple[str, int]]] = {}
        self.module_names: dict[str, str | None] = {}  # file -> its module name, as read
        self._indexes: dict[str, object] = {}
        self._gates: dict[tuple, str | None] = {}
        self._deciding: set[tuple] = set()  # the gates being decided now (see _gate)
        self._imported_back = 0  # how many times a decision met one of those
        self._named: dict[tuple[str, str], bool] = {}  # _named_in_text's answers
        self._loaders: dict[str, bool] = {}  # file -> whether it loads modules by name
        self._quoted: dict[str, dict] = {}  # package -> _quoted_names
        self._dotted: dict[str, dict] = {}  # package -> _dotted_names
        self._package_files: dict[str, list] = {}  # package -> _own_files
        self._quoted_by_file: dict[str, list] = {}  # file -> _quoted_in, where the facts hold them
        note_tree(self.root)
        if facts is None:
            files, package_folders = ProjectFiles(self.root), {}
            facts = [file_facts(files, path, package_folders=package_folders) for path in python_files(self.root)]
        for path, text, module, imports, quoted in facts:
            if text is None:
                continue
            self.texts[path] = text
            self.module_names[path] = module
            if quoted is not None:
                self._quoted_by_file[path] = quoted
            for imported, line in imports:
                self.importers.setdefault(imported, []).append((path, line))
        self.nvidia_extensions = self._nvidia_only_extensions()
        self._extension_import = re.compile(
            r"^(?:import|from)[ \t]+(?P<module>%s)(?![\w.])" % "|".join(map(re.escape, self.nvidia_extensions)), re.M
        ) if self.nvidia_extensions else None

    # --- the text pass ----------------------------------------------------------------------

    def _nvidia_only_extensions(self) -> dict[str, str]:
        """Extension modules that only an NVIDIA-only package of the project builds
        (FlashAttention's `csrc/fused_dense_lib/setup.py` builds `fused_dense_lib` with CUDA
        and has no ROCm side): module name -> why."""
        from rocmlint.build.project_root import nvidia_only_subproject

        found: dict[str, str] = {}
        for path, text in self.texts.items():
            if os.path.basename(path) != "setup.py" or "CUDAExtension" not in text:
                continue
            names = _CUDA_EXTENSION_NAME.findall(text)
            why = nvidia_only_subproject(path) if names else None
            if why is not None:
                where = os.path.relpath(path, self.root).replace(os.sep, "/")
                for name in names:
                    found[name] = f"an extension only {where} builds, for NVIDIA ({why.split(':', 1)[0]})"
        return found

    # --- the question -----------------------------------------------------------------------

    def gate(self, path: str, _depth: int = 0, side: str = "amd", own_imports: bool = True) -> str | None:
        """Why the module at `path` is code for one GPU stack by its importers, or None. `side`:
        "amd" asks whether it never runs on AMD, "nvidia" whether it never runs on NVIDIA.
        `own_imports`: whether the module's own top-level imports may decide (not where the
        finding is that import)."""
        return self._gate(os.path.abspath(path), _depth, side, own_imports)

    def _gate(self, path: str, depth: int, side: str, own_imports: bool = True) -> str | None:
        """gate(), or _BACK inside a decision: the module is reached (so far) only through a
        module still being decided, which imports it back (`model.py` imports `decode.py` at
        its top, `decode.py` imports `model.py` in a function): such an import says nothing
        either way, and the other importers decide."""
        key = (path, side, own_imports)
        if key in self._gates:
            return self._gates[key]
        if key in self._deciding:
            self._imported_back += 1
            return _BACK
        self._deciding.add(key)
        imported_back = self._imported_back
        try:
            reason = self._decide(path, depth, side, own_imports)
        finally:
            self._deciding.discard(key)
        if not self._deciding:
            # The whole decision is made: reached only through itself is reached by nothing.
            reason = None if reason is _BACK else reason
        elif self._imported_back != imported_back:
            return reason  # it leaned on a module still being decided: true only inside that decision
        self._gates[key] = reason
        return reason

    def _decide(self, path: str, depth: int, side: str = "amd", own_imports: bool = True) -> str | None:
        name = os.path.basename(path)
        text = self.texts.get(path)
        if own_imports:
            unimportable = self._unimportable_on_amd(text or "") if side == "amd" else _unimportable_on_nvidia(text or "")
            if unimportable is not None:
                return unimportable
        if depth > _MAX_DEPTH or name == "__init__.py" or _TEST_FILE.match(name):
            return None  # a package runs whenever a module in it is imported; pytest runs tests
        module = module_name(path)
        if module is None or text is None or re.search(r"""__name__\s*==\s*["']__main__["']""", text):
            return None
        # The package decides what it imports on AMD; its tests, benchmarks and examples are
        # callers like a user's code, and say nothing of which side of it runs there.
        package = module.split(".")[0] + "."
        imports = [(f, n) for f, n in self.importers.get(module, []) if (self.module_names.get(f) or "").startswith(package)]
        if not imports or "." not in module:
            return None
        first = None
        # Imports at the top level of their module first: those need no parsing to decide.
        for importer, line in sorted(imports, key=lambda site: (self._indented(*site), site)):
            why = self._import_gate(importer, line, depth, side)
            if why is None:
                return None
            if why is not _BACK:
                first = first or (importer, line, why)
        if self._named_in_text(module, os.path.dirname(path)):
            return None
        if first is None:
            return _BACK  # imported only by modules that import it back
        importer, line, why = first
        where = os.path.relpath(importer, self.root).replace(os.sep, "/")
        more = f" and {len(imports) - 1} more" if len(imports) > 1 else ""
        stack = "AMD" if side == "amd" else "NVIDIA"
        return f"imported only by code that never runs on {stack}: {where}:{line}{more} ({why})"

    def reached_on_nvidia(self, path: str) -> str | None:
        """Where the project's own code imports the module at `path` in a way that runs on
        NVIDIA (an import at the top of a module that runs there, or one in a function or
        branch that no platform test or `try` keeps from NVIDIA), or None when none was found."""
        path = os.path.abspath(path)
        module = module_name(path)
        if module is None:
            return None
        package = module.split(".")[0] + "."
        for importer, line in sorted(self.importers.get(module, []), key=lambda site: (self._indented(*site), site)):
            if not (self.module_names.get(importer) or "").startswith(package) or _TEST_FILE.match(os.path.basename(importer)):
                continue
            if self._import_gate(importer, line, 0, "nvidia") is None:
                where = os.path.relpath(importer, self.root).replace(os.sep, "/")
                return f"{where}:{line}"
        return None

    def _unimportable_on_amd(self, text: str) -> str | None:
        """Why a module's top-level imports fail on AMD: an NVIDIA-only third-party package, or
        an extension only an NVIDIA-only package of the project builds; or None."""
        found = _TOP_LEVEL_NVIDIA_IMPORT.search(text)
        if found is not None:
            module, what = found.group("module"), NVIDIA_ONLY_MODULES[found.group("module")]
        elif self._extension_import is not None:
            found = self._extension_import.search(text)
            if found is None:
                return None
            module, what = found.group("module"), self.nvidia_extensions[found.group("module")]
        else:
            return None
        line = text.count("\n", 0, found.start()) + 1
        return f"imports `{module}` at its top level (line {line}): {what}; it cannot be imported on AMD"

    def _import_gate(self, importer: str, line: int, depth: int, side: str = "amd") -> str | None:
        """Why the import statement at `line` of `importer` never runs on AMD (side "amd") or
        never breaks an NVIDIA run (side "nvidia"), or None."""
        from rocmlint.python.gates import not_on_amd, not_on_nvidia, python_module_gate

        if side == "amd":
            by_name = python_module_gate(importer)
            if by_name is not None:
                return by_name if "NVIDIA" in by_name else None
        if not self._indented(importer, line):
            # A statement at the module's top level runs whenever the module is imported
            # (a module-level early exit before it is rare enough to leave unread).
            upstream = self._gate(os.path.abspath(importer), depth + 1, side)
            return self._inside(importer, upstream)
        index = self._index(importer)
        if index is None:
            return None
        nodes = [n for n in index.imports if n.lineno == line]
        if not nodes:
            return None
        why = not_on_amd(nodes[0], index.parents) if side == "amd" else not_on_nvidia(nodes[0], index.parents)
        if why is None and side == "nvidia":
            why = _guarded_import(index, nodes[0])
        if why is not None:
            return why
        upstream = self._gate(os.path.abspath(importer), depth + 1, side)
        return self._inside(importer, upstream)

    def _inside(self, importer: str, upstream: str | None) -> str | None:
        """The reason of an import in a module that never runs on AMD itself."""
        if upstream is None or upstream is _BACK:
            return upstream
        where = os.path.relpath(importer, self.root).replace(os.sep, "/")
        return f"in {where}, which {'is ' if upstream.startswith('imported') else ''}{upstream}"

    def _indented(self, path: str, line: int) -> bool:
        text = self.texts.get(path, "")
        start = 0
        for _ in range(line - 1):
            start = text.find("\n", start) + 1
            if start == 0:
                return True
        return text[start:start + 1] in (" ", "\t")

    def _index(self, path: str):
        if path not in self._indexes:
            from rocmlint.python.index import PythonIndex

            text = self.texts.get(path)
            try:
                tree = ast.parse(text, filename=path) if text is not None else None
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                tree = None
            self._indexes[path] = PythonIndex(tree, path, text.splitlines()) if tree is not None else None
        return self._indexes[path]

    def _named_in_text(self, module: str, folder: str) -> bool:
        """Does the package's own code (or setup.py) name the module outside an import
        statement: its dotted name anywhere (a string for `importlib`, an entry point, a mock
        target), or within quotes its last part alone (`"cutlass_mla"`, a registry of module
        names), relative (`".cutlass_mla"`) or as the end of a dotted name that may be its own
        (`"ops.cutlass_mla"`, `"pkg.ops.cutlass_mla:main"`)? Then it may be loaded in ways not
        read here. A name relative to the package counts only in a file that loads modules by
        name, in the module's folder (`folder`) or naming its package: such a string anywhere
        else (vLLM has thousands: `maybe_prefix(prefix, "model")`, `".layers" not in name`)
        names no module. Tests, benchmarks and examples name modules as callers do, and their
        imports already say nothing (see _decide)."""
        key = (module, folder)
        if key not in self._named:
            self._named[key] = self._find_name(module, folder)
        return self._named[key]

    def _find_name(self, module: str, folder: str) -> bool:
        parent, _, last = module.rpartition(".")
        package = module.split(".")[0] + "."
        if _DOTTED_WORDS.fullmatch(module):
            places = self._dotted_names(package).get(module, ())
        else:  # a folder name no import statement spells (`my-pkg`), reached by a relative import
            places = ((path, at) for path, text in self._own_files(package) for at in _standing_alone(text, module))
        for path, at in places:
            if not _on_an_import_line(self.texts[path], at):
                return True
        package_names = (parent, parent.replace(".", "/")) if parent else ()
        for path, at, written, after in self._quoted_names(package).get(last, ()):
            text = self.texts[path]
            relative = written == last or written.startswith(".")
            if written == last and after != text[at - 1]:
                continue  # not one string: `'model"`
            if written != last and not relative and not (module == written or module.endswith("." + written)):
                continue  # another module of that name: `"pkg.other.model"`
            if after == ":" and not _starts_name(text, at + len(written) + 1):
                continue  # an entry point's `pkg.model:main`, not `"x.model: y"`
            if relative and parent and not (
                self._loads_by_name(path, text)
                and (os.path.dirname(path) == folder or any(n in text for n in package_names))
            ):
                continue
            if not _on_an_import_line(text, at - 1):
                return True
        return False

    def _dotted_names(self, package: str) -> dict[str, list[tuple[str, int]]]:
        """Every dotted name of `package` written standing alone (_standing_alone) in the files
        of `package` and setup.py, under each name it starts with (`pkg.a.b` under `pkg.a` and
        `pkg.a.b`: a search for `pkg.a` there finds it followed by a dot): (file, where it
        starts). One search of the files for all the modules asked."""
        index = self._dotted.get(package)
        if index is None:
            index = self._dotted[package] = {}
            written = re.compile(re.escape(package[:-1]) + r"(?:\.\w+)+")
            for path, text in self._own_files(package):
                for found in written.finditer(text):
                    at = found.start()
                    if at and (text[at - 1].isalnum() or text[at - 1] in "_.`"):
                        continue  # part of a longer name, or between backquotes
                    parts = found.group().split(".")
                    for count in range(2, len(parts) + 1):
                        index.setdefault(".".join(parts[:count]), []).append((path, at))
        return index

    def search_names_ahead(self) -> None:
        """Index the names written in the files of the package with the most modules, which
        _named_in_text searches for the modules of that package asked about: done ahead while
        a scan waits for its first hits (rocmlint.project.gating.ProjectPassAlongside)."""
        counts: dict[str, int] = {}
        for name in self.module_names.values():
            if name is not None and "." in name:
                top = name.split(".")[0] + "."
                counts[top] = counts.get(top, 0) + 1
        if counts:
            package = max(sorted(counts), key=counts.__getitem__)
            self._dotted_names(package)
            self._quoted_names(package)

    def _quoted_names(self, package: str) -> dict[str, list[tuple[str, int, str, str]]]:
        """Every name within quotes in the files of `package` and setup.py, by its last part:
        (file, where the name starts, the name as written, the character after it)."""
        index = self._quoted.get(package)
        if index is None:
            index = self._quoted[package] = {}
            for path, text in self._own_files(package):
                quoted = self._quoted_by_file.get(path)
                for start, written, after in _quoted_in(text) if quoted is None else quoted:
                    index.setdefault(written.rsplit(".", 1)[-1], []).append((path, start, written, after))
        return index

    def _own_files(self, package: str) -> list[tuple[str, str]]:
        """(file, text) of the modules of `package` (its dotted name and a dot) and setup.py."""
        files = self._package_files.get(package)
        if files is None:
            files = self._package_files[package] = [
                (path, text) for path, text in self.texts.items()
                if (self.module_names.get(path) or "").startswith(package) or os.path.basename(path) == "setup.py"
            ]
        return files

    def _loads_by_name(self, path: str, text: str) -> bool:
        found = self._loaders.get(path)
        if found is None:
            found = self._loaders[path] = any(loader in text for loader in _LOADERS_BY_NAME)
        return found


def python_files(root: str) -> list[str]:
    """The Python files of the project under `root` an ImportGraph reads, in the order it reads
    them: folders in name order, but those no project code is in (SKIPPED_FOLDERS, vendored
    code, hidden folders, egg-info, virtual environments); the first _MAX_PYTHON_FILES."""
    found: list[str] = []
    for directory, folders, names in os.walk(os.path.abspath(root)):
        folders[:] = sorted(
            f for f in folders
            if f not in SKIPPED_FOLDERS and f.lower() not in VENDOR_DIRECTORIES and not f.startswith(".")
            and not f.endswith(".egg-info") and not os.path.isfile(os.path.join(directory, f, "pyvenv.cfg"))
        )
        for name in sorted(names):
            if name.endswith(".py"):
                if len(found) == _MAX_PYTHON_FILES:
                    return found
                found.append(os.path.join(directory, name))
    return found


def file_facts(files: ProjectFiles, path: str, quoted: bool = False, package_folders: dict[str, bool] | None = None) -> tuple:
    """What an ImportGraph takes from one file: (path, text, module name, the modules its import
    statements may load, each with its line, and with `quoted` the names within quotes in it as
    _quoted_in gives them, else None); the text None where the file cannot be read.
    `package_folders`: module_name's answers for folders, kept across the files of one read."""
    text = files.text(path)
    if text is None:
        return path, None, None, [], None
    module = module_name(path, package_folders)
    imports = list(_imports_in(text, module, os.path.basename(path) == "__init__.py"))
    return path, text, module, imports, _quoted_in(text) if quoted else None


def _quoted_in(text: str) -> list[tuple[int, str, str]]:
    """Every name within quotes in `text`: (where it starts, the name as written, the character
    after it)."""
    return [(found.start(1), found.group(1), text[found.end(1):found.end(1) + 1]) for found in _QUOTED_NAME.finditer(text)]


def _standing_alone(text: str, name: str) -> list[int]:
    """Where `name` is written in `text` standing alone: not part of a longer name, nor between
    backquotes (documentation, which Python 3 code never holds)."""
    found, hit = [], text.find(name)
    while hit != -1:
        after = text[hit + len(name):hit + len(name) + 1]
        before = text[hit - 1:hit] if hit else ""
        if not (after.isalnum() or after == "_" or before.isalnum() or before in ("_", ".", "`")):
            found.append(hit)
        hit = text.find(name, hit + 1)
    return found


def _on_an_import_line(text: str, at: int) -> bool:
    line_start = text.rfind("\n", 0, at) + 1
    return text[line_start:at].lstrip().startswith(("from ", "import "))


def _starts_name(text: str, at: int) -> bool:
    return at < len(text) and (text[at].isalpha() or text[at] == "_")


def _unimportable_on_nvidia(text: str) -> str | None:
    """Why a module's top-level imports fail on NVIDIA machines (AMD's aiter), or None."""
    found = _TOP_LEVEL_AITER_IMPORT.search(text)
    if found is None:
        return None
    line = text.count("\n", 0, found.start()) + 1
    return (f"imports `aiter` at its top level (line {line}), AMD's kernel library: it cannot be imported "
            "without ROCm, so none of its code runs on NVIDIA")


def _guarded_import(index, node) -> str | None:
    """An import inside the body of a `try` with an `except` clause (same function): a failed
    import is handled where it happens."""
    child, parent = node, index.parents.get(id(node))
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        if isinstance(parent, ast.Try) and parent.handlers and any(child is s for s in parent.body):
            return f"inside `try:` with an `except` clause (line {parent.lineno})"
        child, parent = parent, index.parents.get(id(parent))
    return None


def module_name(path: str, package_folders: dict[str, bool] | None = None) -> str | None:
    """The dotted name a file is imported by: its path below the top of its package
    (`vllm/attention/ops/cutlass.py` -> `vllm.attention.ops.cutlass`), or its stem where its
    folder is no package. `package_folders` keeps whether each folder looked at holds an
    `__init__.py`, for the next file of the same read (the files of one folder share every
    folder above it)."""
    path = os.path.abspath(path)
    directory, file_name = os.path.split(path)
    stem = file_name[:-3] if file_name.endswith(".py") else None
    if stem is None:
        return None
    parts = [] if stem == "__init__" else [stem]
    while _is_package(directory, package_folders):
        directory, package = os.path.split(directory)
        parts.insert(0, package)
    return ".".join(parts) or None


def _is_package(directory: str, package_folders: dict[str, bool] | None) -> bool:
    found = None if package_folders is None else package_folders.get(directory)
    if found is None:
        found = os.path.isfile(os.path.join(directory, "__init__.py"))
        if package_folders is not None:
            package_folders[directory] = found
    return found


def _import_statements(padded: str):
    """The matches of `_IMPORT.finditer(padded)`, tried only at the start of lines that hold the
    word `import` (every match holds it on its first line) rather than at every line."""
    end, tried = 0, -1
    at = padded.find("import")
    while at != -1:
        line_start = padded.rfind("\n", 0, at)
        if line_start >= end and line_start != tried:
            tried = line_start
            match = _IMPORT.match(padded, line_start)
            if match is not None:
                yield match
                end = match.end()
        at = padded.find("import", at + len("import"))


def _imports_in(text: str, module: str | None, is_package: bool):
    """(module name, line) for each module an import statement of `text` may load: `import
    a.b`, `from a import b` (a, and a.b if b is a module), relative imports resolved against
    the importing module's package."""
    package = (module or "").split(".") if is_package else (module or "").split(".")[:-1]
    padded = "\n" + text
    line, counted = 0, 0
    for match in _import_statements(padded):
        line += padded.count("\n", counted, match.start() + 1)
        counted = match.start() + 1
        if match.group("modules") is not None:
            for item in match.group("modules").split(","):
                name = item.split(" as ")[0].strip()
                if _IDENTIFIER.fullmatch(name):
                    yield name, line
            continue
        base = match.group("base")
        dots = len(base) - len(base.lstrip("."))
        if dots:
            if dots - 1 > len(package) or not module:
                continue
            anchor = package[: len(package) - (dots - 1)]
            base = ".".join(anchor + ([base[dots:]] if base[dots:] else []))
        if not base:
            continue
        yield base, line
        for item in match.group("names").strip("()").split(","):
            name = item.split(" as ")[0].strip()
            if name.isidentifier():
                yield f"{base}.{name}", line
