"""The project pass kept between scans (rocmlint.project.kept): a re-scan in which nothing the
pass read has changed reads no build file, header or module again and says exactly what a
cold scan says; a change to anything it read, or to what it would now read, runs it afresh.

Scans run in-process (rocmlint.cli.main) so that the pass and the files it reads can be
counted; every warm result is compared with a scan that keeps nothing."""

import json
import os
import random
import shutil
import time

import pytest

from conftest import write_files
from rocmlint import engine
from rocmlint.cli import main
from rocmlint.files import result_cache, tree
from rocmlint.project import gating

MASK = "__device__ float sum(float v) { return v + __shfl_xor_sync(0xffffffff, v, 16); }\n"
CUTLASS = "#include <cutlass/gemm/device/gemm.h>\n"

PROJECT = {
    "CMakeLists.txt": """
        if(USE_ROCM)
          set(GPU_LANG HIP)
        else()
          set(GPU_LANG CUDA)
        endif()
        set(SRC csrc/common.cu)
        if(GPU_LANG STREQUAL "CUDA")
          list(APPEND SRC csrc/cutlass_gemm.cu)
        endif()
        add_library(ext ${SRC})
    """,
    "csrc/common.cu": '#include "shared.h"\n' + MASK,
    "csrc/shared.h": "#pragma once\n#define TILE 16\n",
    "csrc/cutlass_gemm.cu": CUTLASS + '#include "gemm_traits.h"\n' + MASK,
    "csrc/gemm_traits.h": "#pragma once\n" + MASK,
    "pkg/__init__.py": "",
    "pkg/dispatch.py": """
        import torch
        if torch.version.hip:
            from pkg import rocm_ops as ops
        else:
            from pkg import cuda_ops as ops
    """,
    "pkg/cuda_ops.py": "import pynvml\n",
    "pkg/rocm_ops.py": "x = 1\n",
}


@pytest.fixture
def project(tmp_path, monkeypatch):
    """The project, the current folder, and no two-second wait: files written by the test are
    not taken for ones that may still be changing (tree.RACY_NANOSECONDS), except where a test
    says otherwise."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tree, "RACY_NANOSECONDS", 0)
    root = tmp_path / "proj"
    write_files(root, PROJECT)
    return root


class Counted:
    """How often the project pass ran, and which files went through the project reader."""

    def __init__(self, monkeypatch):
        self.passes = 0
        self.read: list[str] = []
        real_pass, real_read, real_plain_read = gating.apply_project_model, tree.ProjectFiles._read, tree.read_regular_file

        def counted_pass(*args, **kwargs):
            self.passes += 1
            return real_pass(*args, **kwargs)

        def counted_read(files, path, *args):
            self.read.append(path)
            return real_read(files, path, *args)

        def counted_plain_read(path, *args, **kwargs):
            self.read.append(path)
            return real_plain_read(path, *args, **kwargs)

        monkeypatch.setattr(gating, "apply_project_model", counted_pass)
        monkeypatch.setattr(tree.ProjectFiles, "_read", counted_read)
        monkeypatch.setattr(tree, "read_regular_file", counted_plain_read)

    def reset(self):
        self.passes, self.read = 0, []

    def existing_files_read(self) -> list[str]:
        """The names of the files read that exist (a file the pass looked for and did not
        find is looked for again: whether it is there now is what tells)."""
        return sorted({os.path.basename(p) for p in self.read if os.path.exists(p)})


def _scan(root, cache=None, *args) -> str:
    # Every scan as a new process would see the tree: nothing an earlier scan of this process
    # learnt about it is kept in memory.
    tree.forget_what_was_read_from_disk()
    out = os.path.join(os.path.dirname(os.path.abspath(root)), "report.json")
    options = ["--cache-dir", str(cache)] if cache else ["--no-cache"]
    code = main(["scan", str(root), "--format", "json", "--output", out, "--show-gated", "--exit-zero", "--preview", *options, *args])
    assert code == 0
    with open(out, encoding="utf-8") as handle:
        return handle.read()


def _gates(report: str) -> dict:
    return {(os.path.basename(f["path"]), f["code"], f["line"]): f["gate"] for f in json.loads(report)["gated"]}


def test_a_warm_scan_reads_no_build_file_header_or_module_again(project, tmp_path, monkeypatch):
    counted = Counted(monkeypatch)
    cache = tmp_path / "cache"
    cold = _scan(project)
    assert ("cutlass_gemm.cu", "ROCM005", 1) in _gates(cold)  # the project pass gates it: CUDA-only
    assert ("cuda_ops.py", "ROCM001", 1) in _gates(cold)  # imported only on the NVIDIA side
    counted.reset()
    assert _scan(project, cache) == cold
    assert counted.passes == 1 and "CMakeLists.txt" in counted.existing_files_read()
    counted.reset()
    assert _scan(project, cache) == cold
    assert counted.passes == 0 and counted.existing_files_read() == []


def _edit(name, change):
    def edit(root):
        path = root / name
        path.write_text(change(path.read_text()))
    return edit


def _remove(name):
    return lambda root: (root / name).unlink()


def _add(name, text):
    def add(root):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return add


# Each change to what the pass read, or would now read: the pass runs again, and the warm scan
# says what a cold one says. `changes` says whether the report differs from before.
CHANGES = {
    "a header's macros": (_edit("csrc/shared.h", lambda t: t + "#ifndef __HIP_PLATFORM_AMD__\n#define TILE_NV 1\n#endif\n"), False),
    "a header of the CUDA-only source only": (_edit("csrc/gemm_traits.h", lambda t: t + "__device__ int x = __ballot_sync(0xffffffff, 1);\n"), True),
    "the build file's source lists": (_edit("CMakeLists.txt", lambda t: t.replace("csrc/common.cu)", "csrc/common.cu csrc/cutlass_gemm.cu)")), True),
    "the build file removed": (_remove("CMakeLists.txt"), True),
    "a new CMakeLists.txt the pass now reads": (
        _add("csrc/sub/CMakeLists.txt", "if(USE_ROCM)\n  add_library(sub ../cutlass_gemm.cu)\nendif()\n"), True
    ),
    "a source renamed": (lambda root: (root / "csrc/common.cu").rename(root / "csrc/common_renamed.cu"), True),
    "a module that imports the NVIDIA one on every side": (_add("pkg/always.py", "from pkg import cuda_ops\n"), True),
    "the importer edited": (_edit("pkg/dispatch.py", lambda t: t.replace("if torch.version.hip:", "if True:")), True),
    "a configuration that declares a file CUDA-only": (
        _add("pyproject.toml", '[tool.rocmlint]\ncuda-only = ["csrc/common.cu"]\n'), True
    ),
    "a link in a source's place": (
        lambda root: ((root / "csrc/common.cu").unlink(), os.symlink(root / "csrc/gemm_traits.h", root / "csrc/common.cu")), True
    ),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_change_to_what_the_pass_reads_runs_it_again(project, tmp_path, monkeypatch, change):
    counted = Counted(monkeypatch)
    cache = tmp_path / "cache"
    before = _scan(project, cache)
    _scan(project, cache)
    counted.reset()
    assert _scan(project, cache) == before and counted.passes == 0
    edit, changes_report = CHANGES[change]
    edit(project)
    cold = _scan(project)
    assert (cold != before) == changes_report
    counted.reset()
    assert _scan(project, cache) == cold
    assert counted.passes == 1
    counted.reset()
    assert _scan(project, cache) == cold and counted.passes == 0


def test_a_file_touched_but_not_changed_is_compared_by_its_bytes(project, tmp_path, monkeypatch):
    counted = Counted(monkeypatch)
    cache = tmp_path / "cache"
    before = _scan(project, cache)
    _scan(project, cache)
    for name in ("CMakeLists.txt", "csrc/shared.h"):
        (project / name).write_text((project / name).read_text())  # a new signature, the same bytes
    counted.reset()
    assert _scan(project, cache) == before
    assert counted.passes == 0 and counted.existing_files_read() == ["CMakeLists.txt", "shared.h"]


def test_files_just_written_are_read_again_until_they_settle(project, tmp_path, monkeypatch):
    """A file changed within two seconds of being read could change again within one tick of
    its clock and keep its signature: its bytes are compared each time it is checked."""
    monkeypatch.setattr(tree, "RACY_NANOSECONDS", 3_600_000_000_000)  # everything counts as just written
    counted = Counted(monkeypatch)
    cache = tmp_path / "cache"
    before = _scan(project, cache)
    _scan(project, cache)
    counted.reset()
    assert _scan(project, cache) == before and counted.passes == 0
    assert {"CMakeLists.txt", "shared.h", "dispatch.py"} <= set(counted.existing_files_read())
    # A same-size edit within the same tick would keep the signature: the bytes tell it.
    text = (project / "CMakeLists.txt").read_text()
    stat = (project / "CMakeLists.txt").stat()
    (project / "CMakeLists.txt").write_text(text.replace("list(APPEND SRC csrc/cutlass_gemm.cu)", "list(APPEND SRC csrc/cutlass_gemmX.cu)"))
    os.utime(project / "CMakeLists.txt", ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert _scan(project, cache) == _scan(project) != before


def test_other_options_and_folders_keep_passes_of_their_own(project, tmp_path, monkeypatch):
    counted = Counted(monkeypatch)
    cache = tmp_path / "cache"
    runs = [(), ("--select", "ROCM005"), ("--rocm-version", "6.2")]
    reports = {args: _scan(project, None, *args) for args in runs}
    for _ in range(2):
        for args in runs:
            assert _scan(project, cache, *args) == reports[args]
    counted.reset()
    for args in runs:
        assert _scan(project, cache, *args) == reports[args]
    assert counted.passes == 0
    assert _scan(project / "csrc", cache) == _scan(project / "csrc")


def test_a_tampered_kept_pass_is_a_miss_never_an_error(project, tmp_path, monkeypatch):
    counted = Counted(monkeypatch)
    cache = tmp_path / "cache"
    cold = _scan(project)
    _scan(project, cache)
    _scan(project, cache)
    pack = cache / "results.pack"
    header, *lines = pack.read_bytes().split(b"\n")
    (index,) = [i for i, line in enumerate(lines) if line.startswith(b"P\t")]
    fields = lines[index].split(b"\t", 5)
    record = json.loads(fields[5])
    chooser = random.Random(5)
    tampered = [
        {**record, "gates": record["gates"][:-1]},
        {**record, "gates": [len(record["reasons"])] * len(record["gates"])},
        {**record, "reasons": [1] * len(record["reasons"])},
        {**record, "problems": [["x", 1, None, False]]},
        {**record, "read": {**record["read"], "reads": [[None, "/dev/zero", 0, False, None, True, "0", None]]}},
        {**record, "read": {**record["read"], "trees": [["/", "/", "0"]]}},
        {**record, "read": {**record["read"], "folders": [[7, "x"]]}},
        {**record, "read": []},
        {**record, "key": None},
        [],
    ]

    def scan_over(value) -> None:
        fields[5] = json.dumps(value).encode()
        lines[index] = b"\t".join(fields)
        pack.write_bytes(b"\n".join([header, *lines]))
        result_cache._LOADED.clear()
        counted.reset()
        assert _scan(project, cache) == cold, value

    for value in tampered:
        scan_over(value)
        assert counted.passes == 1
    # Any field of what was read given another value: the pass runs again, or the record still
    # says what holds (a file marked as just written is only read again); never an error.
    for field in ("trees", "reads", "folders"):
        for position, item in enumerate(record["read"][field]):
            for _ in range(3):
                item = list(item)
                item[chooser.randrange(len(item))] = chooser.choice([None, 3, -1, "x", "", [], {}, True, 2**70])
                changed = [*record["read"][field]]
                changed[position] = item
                scan_over({**record, "read": {**record["read"], field: changed}})


def test_a_cold_scan_of_files_written_just_before_keeps_its_pass_only_when_their_directives_agree(project, tmp_path, monkeypatch):
    """The per-file pass hands the project pass the directives of the C/C++ files it read; a
    file changed since the scan started may not be the one it read: the pass is kept only when
    the directives read again agree."""
    counted = Counted(monkeypatch)
    cache = tmp_path / "cache"
    monkeypatch.setattr(tree, "RACY_NANOSECONDS", 3_600_000_000_000)
    cold = _scan(project, cache)
    counted.reset()
    assert _scan(project, cache) == cold and counted.passes == 0  # kept: the directives agreed


def test_two_seconds_of_settling_is_the_default(project, tmp_path, monkeypatch):
    """Without the test's shortcut: a tree written just now is kept once it has settled."""
    monkeypatch.setattr(tree, "RACY_NANOSECONDS", 2_000_000_000)
    counted = Counted(monkeypatch)
    cache = tmp_path / "cache"
    cold = _scan(project, cache)
    time.sleep(2.1)
    _scan(project, cache)
    counted.reset()
    assert _scan(project, cache) == cold and counted.passes == 0 and counted.existing_files_read() == []


def test_a_cache_folder_inside_the_project_does_not_make_the_pass_stale(project, tmp_path, monkeypatch):
    counted = Counted(monkeypatch)
    cache = project / "build" / "rocmlint-cache"  # git ignores nothing here: not a git work tree
    cold = _scan(project)
    assert _scan(project, cache) == cold
    _scan(project, cache)
    counted.reset()
    assert _scan(project, cache) == cold and counted.passes == 0
    shutil.rmtree(cache)


# --- the pass run beside the per-file pass (rocmlint.project.gating.ProjectPassAlongside) -------

# Enough files for a scan with two jobs to check them in worker processes (engine's threshold),
# none of them with a hit.
FILLER = {f"pkg/filler/m{i:03d}.py": "x = 1\n" for i in range(210)}


@pytest.fixture
def many(project):
    write_files(project, FILLER)
    return project


@pytest.fixture
def beside(monkeypatch):
    """The project passes run beside a per-file pass, counted. Each batch given is looked at
    before the per-file pass goes on, as on a machine where the pass keeps up: then all of its
    reads happen while the per-file pass runs (here, a small tree would end that pass first)."""
    made = []

    class InStep(gating.ProjectPassAlongside):
        def __init__(self, *args, **kwargs):
            made.append(self)
            super().__init__(*args, **kwargs)
            self.given = self.done = 0
            build_models = self._pass.build_models

            def counted_build_models(known):  # the last step for each batch
                build_models(known)
                self.done += 1

            self._pass.build_models = counted_build_models

        def give(self, findings, directives):
            super().give(findings, directives)
            self.given += 1
            while self.done < self.given and self._thread.is_alive():
                time.sleep(0.001)

    monkeypatch.setattr(gating, "ProjectPassAlongside", InStep)
    return made


def test_a_pass_beside_the_per_file_pass_says_what_the_pass_after_it_says(many, beside):
    after = _scan(many, None, "-j", "1")
    assert not beside
    assert _scan(many, None, "-j", "2") == after
    assert len(beside) == 1
    # Both sides of the project pass took part: the build (a CUDA-only source) and the imports.
    assert ("cutlass_gemm.cu", "ROCM005", 1) in _gates(after) and ("cuda_ops.py", "ROCM001", 1) in _gates(after)


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_pass_run_beside_the_per_file_pass_is_kept_and_run_again_on_a_change(many, tmp_path, monkeypatch, beside, change):
    counted = Counted(monkeypatch)
    cache = tmp_path / "cache"
    before = _scan(many, cache, "-j", "2")  # recorded as it ran beside
    assert len(beside) == 1 and before == _scan(many, None, "-j", "1")
    counted.reset()
    assert _scan(many, cache, "-j", "2") == before
    assert counted.passes == 0 and len(beside) == 1  # kept: not run, beside or after
    edit, changes_report = CHANGES[change]
    edit(many)
    cold = _scan(many, None, "-j", "1")
    assert (cold != before) == changes_report
    counted.reset()
    assert _scan(many, cache, "-j", "2") == cold
    # Run again: after the per-file pass (a pass is kept for these options), or beside it (new
    # options, such as another configuration, have no pass kept).
    assert counted.passes + len(beside) == 1 + 1


def test_a_failure_of_the_pass_beside_is_raised_by_the_scan(many, tmp_path, monkeypatch):
    from rocmlint.config import Config
    from rocmlint.engine import ScanRequest, scan, select_checks

    def fails(self, findings):
        raise RuntimeError("the pass failed")

    monkeypatch.setattr(gating.ProjectPass, "look", fails)
    with pytest.raises(RuntimeError, match="the pass failed"):
        scan(ScanRequest([many], select_checks(preview=True), Config(root=many), jobs=2, cache_dir=str(tmp_path / "cache")))
    assert tree._reading is None  # the recording of the pass ended with it


def test_what_the_worker_reading_the_build_read_is_recorded(many, tmp_path, monkeypatch, beside):
    # The CUDA-only source list is in a file that CMakeLists.txt includes: only the project's
    # build model, read in a worker process of the per-file pass, reads it.
    cmakelists = many / "CMakeLists.txt"
    cuda_only = 'if(GPU_LANG STREQUAL "CUDA")\n  list(APPEND SRC csrc/cutlass_gemm.cu)\nendif()\n'
    assert cuda_only in cmakelists.read_text()
    cmakelists.write_text(cmakelists.read_text().replace(cuda_only, "include(cmake/sources.cmake)\n"))
    write_files(many, {"cmake/sources.cmake": cuda_only})
    cache = tmp_path / "cache"
    before = _scan(many, cache, "-j", "2")
    assert len(beside) == 1 and before == _scan(many, None, "-j", "1")
    assert ("cutlass_gemm.cu", "ROCM005", 1) in _gates(before)
    (many / "cmake/sources.cmake").write_text("list(APPEND SRC csrc/cutlass_gemm.cu)\n")  # both builds now
    after = _scan(many, None, "-j", "1")
    assert ("cutlass_gemm.cu", "ROCM005", 1) not in _gates(after)
    assert _scan(many, cache, "-j", "2") == after


def test_what_the_workers_reading_the_import_graph_read_is_recorded(many, tmp_path, monkeypatch, beside):
    # Python checks only: no C/C++ file is scanned, so no build model is read, and the import
    # graph, read by the workers of the per-file pass, is all that reads the importer.
    from rocmlint.project import python_imports

    graphs = []  # how each graph was read: True where the workers read its files
    real = python_imports.ImportGraph.__init__

    def counted(self, root, facts=None):
        graphs.append(facts is not None)
        real(self, root, facts)

    monkeypatch.setattr(python_imports.ImportGraph, "__init__", counted)
    monkeypatch.setattr(engine, "_GRAPH_IN_WORKERS", 2)  # as many workers as the scan has
    cache = tmp_path / "cache"
    before = _scan(many, cache, "-j", "2", "--select", "ROCM001")
    assert graphs == [True] and len(beside) == 1
    assert before == _scan(many, None, "-j", "1", "--select", "ROCM001")
    assert ("cuda_ops.py", "ROCM001", 1) in _gates(before)
    CHANGES["the importer edited"][0](many)
    after = _scan(many, None, "-j", "1", "--select", "ROCM001")
    assert ("cuda_ops.py", "ROCM001", 1) not in _gates(after)
    assert _scan(many, cache, "-j", "2", "--select", "ROCM001") == after


def test_with_few_workers_the_thread_reads_the_import_graph(many, monkeypatch, beside):
    from rocmlint.project import python_imports

    graphs = []
    real = python_imports.ImportGraph.__init__
    monkeypatch.setattr(python_imports.ImportGraph, "__init__", lambda self, root, facts=None: graphs.append(facts) or real(self, root, facts))
    assert _scan(many, None, "-j", "2") == _scan(many, None, "-j", "1")
    assert len(beside) == 1 and graphs[0] is None  # read in the thread beside, not by the two workers


def test_a_worker_reading_the_graph_records_no_folder_of_the_tree_the_scan_lists(project, tmp_path):
    # The scanning process lists the tree (a change of names anywhere in it is seen there); the
    # worker's recording, added to it, holds the files it read and the folders above the tree.
    result = gating.read_import_facts(str(project), [str(project / "pkg/dispatch.py")], str(tmp_path / "cache"))
    facts, recorded, keepable = result
    assert keepable and facts[0][2] == "pkg.dispatch" and ("torch", 2) in facts[0][3]
    assert [entry[1] for entry in recorded["reads"]] == [str(project / "pkg/dispatch.py")]
    folders = [folder for folder, _ in recorded["folders"]]
    assert str(project) in folders and str(tmp_path) in folders
    assert not any(folder.startswith(str(project) + os.sep) for folder in folders)
    assert recorded["trees"] == [] and tree._reading is None


def test_a_graph_put_together_from_the_workers_facts_is_the_graph_read_here(project):
    from rocmlint.project import python_imports

    write_files(project, {"pkg/registry.py": 'BACKENDS = {"cuda": "pkg.cuda_ops", "rocm": \'.rocm_ops\', "x": "pkg.rocm_ops:main"}\n'})
    root = str(project)
    files = tree.ProjectFiles(root)
    facts = [python_imports.file_facts(files, path, quoted=True) for path in python_imports.python_files(root)]
    assert any(quoted for *_, quoted in facts)
    here, put_together = python_imports.ImportGraph(root), python_imports.ImportGraph(root, facts)
    assert put_together.texts == here.texts and put_together.importers == here.importers
    assert put_together._quoted_names("pkg.") == here._quoted_names("pkg.") != {}
    for module in ("cuda_ops", "rocm_ops"):
        path = str(project / "pkg" / f"{module}.py")
        assert put_together.gate(path) == here.gate(path)


def test_a_failure_while_reading_ahead_costs_nothing(many, monkeypatch, beside):
    # What the pass reads before any hit asks for it must not fail a scan that the pass after
    # the per-file pass would finish: a hit that needs the graph reads it again.
    from rocmlint.project import python_imports

    def fails(self):
        raise RuntimeError("read ahead failed")

    monkeypatch.setattr(python_imports.ImportGraph, "search_names_ahead", fails)
    assert _scan(many, None, "-j", "2") == _scan(many, None, "-j", "1")
    assert len(beside) == 1
