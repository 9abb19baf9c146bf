"""The project pass: the hits of a scan looked at again with what their project says
(rocmlint.project), after the per-file pass has checked each file on its own: C/C++ hits with
what the project's build compiles for ROCm, and every hit with whether its file belongs to an
NVIDIA-only package of a project that builds for AMD (rocmlint.build.project_root)."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import Sequence

from rocmlint.config import Config
from rocmlint.files.languages import language_of
from rocmlint.files.tree import is_within
from rocmlint.findings import Finding, Problem


def apply_project_model(
    findings: list[Finding], checks: Sequence, config: Config, problems: list[Problem], known: dict | None = None,
    scanned: Sequence | None = None, models: dict | None = None, import_graphs: dict | None = None,
) -> list[Finding]:
    """Look again at every C/C++ hit with what its project's build says (rocmlint.project):
    hits in files the ROCm build never compiles, under macros the project defines only for
    NVIDIA, or in calls a HIP shim rewrites are gated; hits the file alone took for dead code
    come back when the project defines the macro for HIP. Built only for projects with hits.
    `scanned`: the paths the user asked to scan; outside git, no project starts above them
    (project_ceiling). `models` and `import_graphs`: the project models and Python import
    graphs already built, by project root; a long-lived caller (the language server) keeps
    them between calls and empties them when what they were read from changes. New ones are
    added to them."""
    return ProjectPass(checks, config, scanned, models, import_graphs).finish(findings, problems, known)


class ProjectPass:
    """apply_project_model in two steps, so that a scan can run the first beside its per-file
    pass as hits come in (ProjectPassAlongside): `look` at hits in the order of the
    scan's list (every Python hit is decided there, and the C/C++ hits are put by file), then
    `finish` the C/C++ hits once all are in. What they read is kept by project root and read
    once; `read_import_graphs_ahead`, `build_models` and worker processes (`reading_models`,
    `reading_graphs`) read some of it before `look` or `finish` needs it."""

    def __init__(self, checks: Sequence, config: Config, scanned: Sequence | None = None,
                 models: dict | None = None, import_graphs: dict | None = None):
        self.by_id = {c.id: c for c in checks}
        self.config = config
        self.folders = _folders(scanned or ())
        self.models = {} if models is None else models
        self.import_graphs = {} if import_graphs is None else import_graphs
        self.by_path: dict[str, list[int]] = {}  # C/C++ file -> indexes of its hits, for finish
        self.looked = 0  # how many hits of the list `look` has seen
        self._importers_gates: dict[str, str | None] = {}  # per file: its findings share the answer
        self._overrides = _overrides(config)
        self._fresh: list[str] = []  # roots of the models built by this pass, their problems not yet told
        self._ahead = 0  # how many of by_path's files build_models has seen
        self.reading_models: dict = {}  # root -> the Future of read_model in a worker process
        # root -> the Futures of read_import_facts in worker processes, in the graph's file order
        self.reading_graphs: dict[str, list] = {}

    def look(self, findings: list[Finding]) -> None:
        """Look at the hits of `findings` from the first not yet seen, replacing gated ones in
        the list: the list grows between calls and keeps its order."""
        from rocmlint.build.project_root import nvidia_only_subproject, project_kind
        from rocmlint.cpp.wave import KEEPS_TO_32_LANE_GROUPS
        from rocmlint.records import replace as replaced

        folders, import_graphs = self.folders, self.import_graphs
        for index in range(self.looked, len(findings)):
            finding = findings[index]
            check = self.by_id.get(finding.check_id)
            if check is None or not check.gated:
                continue
            if "cpp" in check.languages and language_of(finding.path) == "cpp":
                if finding.gate == KEEPS_TO_32_LANE_GROUPS and project_kind(finding.path) != "amd":
                    # 32-lane code in a project with no AMD side: which lanes it means on AMD is
                    # for the port to decide, so it is reported (rocmlint.cpp.wave).
                    findings[index] = replaced(finding, gate=None)
                self.by_path.setdefault(finding.path, []).append(index)  # the build may compile it for ROCm: finish asks
            elif check.breaks_nvidia:
                # ROCm-only code that an NVIDIA run may reach: gated where its module never runs on
                # NVIDIA, by its imports and importers.
                if finding.gate is None and language_of(finding.path) == "python":
                    gate = _importers_gate(finding.path, folders, import_graphs, side="nvidia")
                    if gate is not None and re.search(rf"\(line {finding.line}\)", gate.split(":", 1)[0]):
                        # never gated by itself: the top-level import that is the finding
                        gate = _importers_gate(finding.path, folders, import_graphs, side="nvidia", own_imports=False)
                    if gate is not None:
                        findings[index] = replaced(finding, gate=gate)
            elif finding.gate is None and (subproject := nvidia_only_subproject(finding.path)) is not None:
                findings[index] = replaced(finding, gate=subproject)
            elif finding.gate is None and language_of(finding.path) == "python":
                if finding.path not in self._importers_gates:
                    self._importers_gates[finding.path] = _importers_gate(finding.path, folders, import_graphs)
                gate = self._importers_gates[finding.path]
                if gate is not None:
                    findings[index] = replaced(finding, gate=gate)
        self.looked = len(findings)

    def scanned_roots(self) -> list[str]:
        """The projects the scanned folders are (or are in)."""
        from rocmlint.files.project_start import find_project_root

        roots = (find_project_root(folder, project_ceiling(folder, self.folders)) for folder in self.folders)
        return list(dict.fromkeys(root for root in roots if root is not None))

    def read_import_graphs_ahead(self) -> None:
        """Read, before any hit has come in, the import graph of each scanned project that builds
        or runs for AMD: its Python hits are likely to ask it (those of a project with no AMD
        side never do)."""
        from rocmlint.build.project_root import folder_kind

        for root in self.scanned_roots():
            if folder_kind(root) == "amd" and root not in self.import_graphs:
                from rocmlint.files.tree import add_to_reading
                from rocmlint.project.python_imports import ImportGraph

                try:
                    facts = None
                    futures = self.reading_graphs.pop(root, None)
                    if futures is not None:
                        facts = []
                        for future in futures:
                            read, recorded, keepable = future.result()
                            add_to_reading(recorded, keepable)  # what the worker read for this pass
                            facts.extend(read)
                    graph = ImportGraph(root, facts)
                    graph.search_names_ahead()
                except Exception:  # noqa: BLE001 - read ahead of need: a hit that asks reads it again, and meets the error there
                    continue
                self.import_graphs[root] = graph

    def build_models(self, known: dict | None = None) -> None:
        """Build the project models that finish will ask for the C/C++ hits seen so far (`known`:
        the C/C++ directives the per-file pass has handed over so far), but those a worker
        process is reading: finish waits for them."""
        paths = list(self.by_path)
        for path in paths[self._ahead:]:
            absolute = os.path.abspath(path)
            root = self._model_root(absolute)
            if root is not None and _torch_cuda_header(absolute) is None and root not in self.reading_models:
                self._model(root, known)
        self._ahead = len(paths)

    def _model_root(self, absolute: str) -> str | None:
        from rocmlint.files.project_start import find_project_root

        return find_project_root(os.path.dirname(absolute), project_ceiling(absolute, self.folders))

    def _model(self, root: str, known: dict | None):
        model = self.models.get(root)
        if model is None and root in self.reading_models:
            from rocmlint.files.tree import add_to_reading

            model, recorded, keepable = self.reading_models.pop(root).result()
            add_to_reading(recorded, keepable)  # what the worker read for this pass
            self.models[root] = model
            self._fresh.append(root)
        if model is None:
            from rocmlint.project import build_model

            model = self.models[root] = build_model(root, self._overrides, known, self.config.max_file_size)
            self._fresh.append(root)
        return model

    def _tell_problems(self, root: str, problems: list[Problem]) -> None:
        """The problems of a model this pass built, once, unless the per-file pass said them."""
        if root not in self._fresh:
            return
        self._fresh.remove(root)
        said = {(os.path.abspath(p.path), p.reason) for p in problems}  # the per-file pass may have said it
        for problem in self.models[root].problems:
            where, reason = problem.split(":", 1)[0], "build file " + problem.split(": ", 1)[-1]
            if (os.path.abspath(where), reason) not in said:
                problems.append(Problem(where, reason))

    def finish(self, findings: list[Finding], problems: list[Problem], known: dict | None = None) -> list[Finding]:
        """The C/C++ hits looked at with what their projects' builds say (the list `look` has
        seen whole); the problems met reading the builds are added to `problems`."""
        from rocmlint.build.project_root import nvidia_only_subproject, project_kind
        from rocmlint.cpp.astgrep import NVCC_COMPILES_IT
        from rocmlint.cpp.wave import KEEPS_TO_32_LANE_GROUPS, keeps_to_32_lane_groups
        from rocmlint.records import replace as replaced

        self.look(findings)
        by_id, overrides = self.by_id, self._overrides
        for path, indexes in self.by_path.items():
            absolute = os.path.abspath(path)
            root = self._model_root(absolute)
            installed = _torch_cuda_header(absolute)
            if installed is not None:
                for index in indexes:
                    if findings[index].gate is None:
                        findings[index] = replaced(findings[index], gate=installed)
                continue
            if _torch_include_header(absolute):
                for index in indexes:
                    if findings[index].gate is None and _hipify_rewrites(by_id[findings[index].check_id].hipify_gated, findings[index]):
                        findings[index] = replaced(findings[index], gate=_TORCH_HIPIFIED_HEADER)
            if root is None:
                declared = overrides.cuda_only(absolute) if overrides and overrides.cuda_only else False
                if declared and not (overrides.rocm_sources and overrides.rocm_sources(absolute)):
                    for index in indexes:
                        if findings[index].gate is None and not by_id[findings[index].check_id].cuda_build:
                            findings[index] = replaced(findings[index], gate=f"CUDA-only: declared in {overrides.where} cuda-only")
                continue
            model = self._model(root, known)
            self._tell_problems(root, problems)
            file_gate = model.file_gate(absolute) or model.nvidia_library_gate(absolute)
            if file_gate is None and model.verdict(absolute).compiled_for not in ("rocm", "both"):
                file_gate = nvidia_only_subproject(absolute)
            table = model.macros_for(absolute)
            # Read the file's conditions again with the project's macros, where they test one.
            if file_gate is None and (model.tested.get(absolute, frozenset()) & (table.facts.keys() | table.platform)):
                gates = model.gates_for(absolute)
                if gates is not None:
                    for index in indexes:
                        if findings[index].gate_fixed:
                            continue
                        check = by_id[findings[index].check_id]
                        line = findings[index].line
                        gate = gates.reason(line, check.check_amd_side)
                        if gate is None and check.hip_only and not gates.on_amd_side(line) and not absolute.lower().endswith(".hip"):
                            gate = NVCC_COMPILES_IT
                        if (findings[index].gate or "").endswith(KEEPS_TO_32_LANE_GROUPS):
                            gate = keeps_to_32_lane_groups(gate)
                        findings[index] = replaced(findings[index], gate=gate)
            for index in indexes:
                finding = findings[index]
                if finding.gate == NVCC_COMPILES_IT and (model.amd_only or model.verdict(absolute).compiled_for == "rocm"):
                    findings[index] = finding = replaced(finding, gate=None)  # HIP alone compiles this file
                if finding.gate == KEEPS_TO_32_LANE_GROUPS and project_kind(absolute) != "amd":
                    findings[index] = finding = replaced(finding, gate=None)  # as above, after the project's macros
                if finding.gate is not None:
                    continue
                check = by_id[finding.check_id]
                if check.cuda_build:
                    # Code nvcc must not see: what matters is whether the CUDA build reads the file
                    # (in a project with no AMD side, every file of it is the CUDA build's).
                    why = model.cuda_build_gate(absolute) if project_kind(absolute) == "amd" else None
                    if why is not None:
                        findings[index] = replaced(finding, gate=why)
                    continue
                hipified = model.hipify_gate(absolute) if _hipify_rewrites(check.hipify_gated, finding) else None
                defined = next(
                    (table.lookup(name) for name in check.project_macro_gate if table.lookup(name).reason), None
                )
                if file_gate is not None:
                    findings[index] = replaced(finding, gate=file_gate)
                elif check.amd_only_gated and model.amd_only:
                    findings[index] = replaced(finding, gate=model.amd_only)
                elif hipified is not None:
                    findings[index] = replaced(finding, gate=hipified)
                elif defined is not None and defined.defined is not False:
                    findings[index] = replaced(finding, gate=f"the project defines it for HIP: {defined.reason}")
                elif check.shim_gated == "cuda-runtime":
                    renamed = model.runtime_shim_for(absolute)
                    if renamed is not None:
                        findings[index] = replaced(finding, gate=renamed)
                elif check.shim_gated:
                    callee = _callee_at(finding)
                    dropping_mask = check.shim_gated == "mask-dropping"
                    shim = model.shim_for(absolute, callee, dropping_mask) if callee else None
                    if shim is not None:
                        where = f"{model.relative(shim.path)}:{shim.line}"
                        how = "redefines {} for HIP without its mask" if dropping_mask else "defines {} for HIP"
                        findings[index] = replaced(finding, gate=f"HIP shim: {where} {how.format(callee)}")
        return findings


class ProjectPassAlongside:
    """The project pass run in a thread of its own while the per-file pass runs in worker
    processes, where the main process would only wait for them: the hits of each batch are
    looked at as they come in (import graphs read, Python hits decided, the builds of projects
    with C/C++ hits read), in the order of the scan's list, so that `finish` gives what
    apply_project_model gives for the whole list. Before the first batch is in, it reads the
    import graphs of the scanned projects (or puts them together from what the workers read
    first, read_import_graphs_in, where there are many workers), and a worker process reads
    their builds (read_models_ahead): what their hits are likely to need. On a machine with a
    core to spare, most of the project pass is done by the time the last batch is in."""

    def __init__(self, checks: Sequence, config: Config, scanned: Sequence | None = None):
        import queue
        import threading

        self._pass = ProjectPass(checks, config, scanned)
        self._findings: list[Finding] = []  # every hit given, in order, as the pass gated it
        self._known: dict = {}  # the C/C++ directives given so far
        self._given: queue.SimpleQueue = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._stopped = False
        self._thread = threading.Thread(target=self._work, name="rocmlint-project-pass", daemon=True)

    def read_models_ahead(self, pool, recorded_under: str | None) -> None:
        """Have a worker of `pool` read the build of each scanned project (read_model): given
        before the pool's first batch, it is taken first. `recorded_under`: the cache folder,
        where the pass is recorded (rocmlint.project.kept), else None."""
        for root in self._pass.scanned_roots():
            self._pass.reading_models[root] = pool.submit(read_model, root, self._pass.config, recorded_under)

    def read_import_graphs_in(self, pool, recorded_under: str | None) -> None:
        """Have the workers of `pool` read the files of the import graph of each scanned project
        that builds or runs for AMD (read_import_facts), a share each: given before the pool's
        first batch, they are taken first, and the thread only puts the graph together
        (read_import_graphs_ahead). `recorded_under` as for read_models_ahead."""
        from rocmlint.build.project_root import folder_kind
        from rocmlint.project.python_imports import python_files

        for root in self._pass.scanned_roots():
            if folder_kind(root) == "amd" and root not in self._pass.import_graphs:
                files = python_files(root)
                self._pass.reading_graphs[root] = [
                    pool.submit(read_import_facts, root, files[i : i + _FACTS_TASK], recorded_under)
                    for i in range(0, len(files), _FACTS_TASK)
                ]

    def start(self) -> None:
        """Start the pass, once the per-file pass's worker processes are started: a process
        forked while another thread runs may inherit a lock that thread held (a pool that forks
        starts all its workers with its first task; other start methods fork no thread)."""
        self._thread.start()

    def give(self, findings: list[Finding], directives: dict) -> None:
        """The hits of the next batch of the per-file pass, and the directives it read."""
        self._given.put((findings, directives))

    def _work(self) -> None:
        try:
            self._pass.read_import_graphs_ahead()
            while (batch := self._given.get()) is not None and not self._stopped:
                findings, directives = batch
                self._known.update(directives)
                self._findings.extend(findings)
                self._pass.look(self._findings)
                self._pass.build_models(self._known)
        except BaseException as exc:  # noqa: B036 - told by finish, in the scan's own thread
            self._error = exc

    def finish(self, findings: list[Finding], problems: list[Problem], known: dict | None = None) -> list[Finding]:
        """apply_project_model's answer for `findings`: the hits given, all of them, in order."""
        self._given.put(None)
        self._thread.join()
        if self._error is not None:
            raise self._error
        if len(findings) != len(self._findings):
            raise RuntimeError(f"the project pass was given {len(self._findings)} hits, the scan has {len(findings)}")
        return self._pass.finish(self._findings, problems, known)

    def stop(self) -> None:
        """Leave the hits not yet looked at (the scan is ending without its project pass)."""
        self._stopped = True
        self._given.put(None)


def read_model(root: str, config: Config, recorded_under: str | None) -> tuple:
    """The model of the project at `root` (rocmlint.project.build_model), read in a worker
    process for ProjectPassAlongside, with what it read as Reading.as_json and whether that can
    be kept (with `recorded_under`, the cache folder: rocmlint.project.kept), else None and
    True. Built from the files alone, as the pass after the per-file pass builds it."""
    from rocmlint.project import build_model

    # What is kept in memory is forgotten first, so that all the model depends on is read, and
    # recorded (the build readers keep what they read with functools.lru_cache).
    return _recorded(lambda: build_model(root, _overrides(config), None, config.max_file_size), recorded_under, forget=True)


# Files of an import graph read by one worker task (read_import_facts): vLLM's 5,500 Python
# files are 22 tasks, a share for each of 16 workers and a few more for those done first.
_FACTS_TASK = 256


def read_import_facts(root: str, paths: list[str], recorded_under: str | None) -> tuple:
    """What rocmlint.project.python_imports.file_facts gives for each of `paths`, files of the
    import graph of the project at `root`, read in a worker process for ProjectPassAlongside;
    with what it read and whether that can be kept, as read_model gives them. The tree itself is
    listed by the process that puts the graph together."""
    from rocmlint.files.tree import ProjectFiles
    from rocmlint.project.python_imports import file_facts

    def read() -> list:
        files, package_folders = ProjectFiles(root), {}
        return [file_facts(files, path, quoted=True, package_folders=package_folders) for path in paths]

    return _recorded(read, recorded_under, listed_elsewhere=(root,))


def _recorded(read, recorded_under: str | None, forget: bool = False, listed_elsewhere: tuple[str, ...] = ()) -> tuple:
    """(`read()`, what it read as Reading.as_json, whether that can be kept) in a worker process
    that reads for the project pass; with `recorded_under` None (no cache), (`read()`, None,
    True). `forget`: empty rocmlint's caches of the tree first (forget_what_was_read_from_disk).
    `listed_elsewhere`: trees the scanning process lists itself (Reading)."""
    from rocmlint.files import tree
    from rocmlint.files.project_start import NAMES_ASKED_ABOVE

    reading = None
    if recorded_under is not None:
        if forget:
            tree.forget_what_was_read_from_disk()
        reading = tree.start_reading(NAMES_ASKED_ABOVE, recorded_under, listed_elsewhere)
    try:
        result = read()
    finally:
        if reading is not None:
            tree.stop_reading()
    return result, reading.as_json() if reading is not None else None, reading is None or reading.keepable


def _torch_cuda_header(path: str) -> str | None:
    """A header of PyTorch's CUDA build in the include tree an installed torch package ships
    (`torch/include/ATen/native/cuda/...`, `.../transformers/cuda/mem_eff_attention/...`):
    PyTorch's ROCm build compiles its hipified copy (`cuda` becomes `hip` in the path), and a
    ROCm torch package ships that copy instead; an extension built for ROCm is hipified to
    include it. Such a file is never compiled for AMD as it is."""
    parts = path.replace(os.sep, "/").split("/")
    for i in range(len(parts) - 2):
        if parts[i] == "torch" and parts[i + 1] == "include" and os.path.isfile(os.sep.join(parts[: i + 1] + ["__init__.py"])):
            below = parts[i + 2 : -1]
            if any(part in ("cuda", "cudnn") for part in below):
                return ("a header of PyTorch's CUDA build, shipped in torch/include/: PyTorch's ROCm build and hipified "
                        "extensions compile its hipified copy (cuda -> hip in the path)")
    return None


_TORCH_HIPIFIED_HEADER = (
    "hipified at build time: a header of the installed PyTorch package; a ROCm PyTorch ships its own hipified "
    "headers, and hipify rewrites an extension's includes of them"
)


def _torch_include_header(path: str) -> bool:
    """Is the file in the include tree an installed torch package ships (`torch/include/`)?"""
    parts = path.replace(os.sep, "/").split("/")
    return any(
        parts[i] == "torch" and parts[i + 1] == "include" and os.path.isfile(os.sep.join(parts[: i + 1] + ["__init__.py"]))
        for i in range(len(parts) - 2)
    )


def _importers_gate(path: str, folders: list[str], graphs: dict, side: str = "amd", own_imports: bool = True) -> str | None:
    """Why a Python file of a project that builds or runs for AMD is code for one GPU stack by
    the modules that import it (rocmlint.project.python_imports), or None. A project with no
    AMD side is being ported: everything in it is on the path the port takes. `side`: "amd"
    asks whether the file never runs on AMD, "nvidia" whether it never runs on NVIDIA."""
    from rocmlint.build.project_root import project_kind
    from rocmlint.files.project_start import find_project_root, package_top

    absolute = os.path.abspath(path)
    if project_kind(absolute) != "amd":
        return None
    directory = os.path.dirname(absolute)
    root = find_project_root(directory, project_ceiling(absolute, folders)) or package_top(directory)
    if root is None:
        return None
    graph = graphs.get(root)
    if graph is None:
        from rocmlint.project.python_imports import ImportGraph

        graph = graphs[root] = ImportGraph(root)
    return graph.gate(absolute, side=side, own_imports=own_imports)


def _folders(scanned: Sequence) -> list[str]:
    folders = []
    for path in scanned:
        absolute = os.path.abspath(path)
        if os.path.isdir(absolute):
            folders.append(absolute)
    return folders


def project_ceiling(absolute: str, folders: list[str]) -> str | None:
    """The highest folder a file's project may start in, or None for no limit but git's. Inside
    a git work tree (as git says) the work tree bounds the project, as it always has. Outside
    one: the highest scanned folder that holds the file; for a file named on its own (or read
    from standard input), the current directory where it holds the file, else the file's own
    folder. A build file in a folder above, shared with others (/tmp/CMakeLists.txt above the
    scanned /tmp/proj), is not the project's."""
    holding = [folder for folder in folders if is_within(absolute, folder)]
    if holding:
        ceiling = min(holding, key=len)
    else:
        cwd = os.getcwd()
        ceiling = cwd if is_within(absolute, cwd) else os.path.dirname(absolute)
    return None if _in_git_work_tree(ceiling) else ceiling


@lru_cache(maxsize=256)
def _in_git_work_tree(folder: str) -> bool:
    from rocmlint.files.discovery import git_work_tree

    return git_work_tree(folder) is not None


def _hipify_rewrites(hipify_gated: bool | str, finding: Finding) -> bool:
    """Whether build-time hipify rewrites what the finding flags: always, never, or when the
    flagged text matches the check's pattern of what hipify maps."""
    if isinstance(hipify_gated, bool):
        return hipify_gated
    line = finding.context.get(finding.line, "")
    text = line[finding.col : finding.end_col] if finding.end_line == finding.line else line[finding.col :]
    return re.search(hipify_gated, text) is not None


_CALLEE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\b")


def _callee_at(finding: Finding) -> str | None:
    """The function called where the finding starts, or the name there (a CUDA enumerator a
    shim may define as well as a function)."""
    text = finding.context.get(finding.line, "")[finding.col :]
    match = _CALLEE.match(text) or _NAME.match(text)
    return match.group(1) if match else None


def _overrides(config: Config):
    """[tool.rocmlint] cuda-only / rocm-sources as path predicates (gitignore-style patterns
    relative to the configuration file)."""
    if not config.cuda_only and not config.rocm_sources:
        return None
    from rocmlint.files.gitignore import PatternList
    from rocmlint.project.model import Overrides

    root = str(config.root.resolve())

    def matcher(patterns: tuple[str, ...]):
        if not patterns:
            return None
        # Matched as `exclude` matches them: a file in a matching folder matches.
        listed = PatternList(patterns, "", "configuration")

        def matches(path: str) -> bool:
            relative = os.path.relpath(path, root)
            return not relative.startswith("..") and listed.leaves_out(relative.replace(os.sep, "/"), False) is not None

        return matches

    where = f"{config.path.name if config.path else 'configuration'} [tool.rocmlint]"
    return Overrides(matcher(config.cuda_only), matcher(config.rocm_sources), where)
