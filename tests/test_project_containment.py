"""The project pass reads the scanned project and nothing else (rocmlint.project, rocmlint.build):
no build file, header or glob outside the project root, no link that leaves it, no folder
above the ones the user asked to scan as the project root (outside git), and no named pipe or
device. What it does not read it says, and the scan goes on.

Scans that could hang before the fix run in a subprocess under a timeout (a guard against a
hang, not a measure of speed)."""

import json
import os
import subprocess
import sys

import pytest

from conftest import write_files as _write
from rocmlint.cli import main

MASK = "__device__ float sum(float v) { return v + __shfl_xor_sync(0xffffffff, v, 16); }\n"
PTX = '__device__ unsigned lane() { unsigned id; asm volatile("mov.u32 %0, %%laneid;" : "=r"(id)); return id; }\n'
# A build that compiles b.cu only for NVIDIA: read, it gates b.cu's hit as CUDA-only.
SPLIT_CMAKE = "if(USE_ROCM)\n  add_library(a a.cu)\nelse()\n  add_library(b b.cu)\nendif()\n"
SPLIT_MAKEFILE = "ifeq ($(USE_HIP),1)\n  SRCS = a.cu\nelse\n  SRCS = b.cu\nendif\nlib.so: $(SRCS)\n\t$(CXX) -o $@ $^\n"
SHIM = "#ifdef __HIP_PLATFORM_AMD__\n#define __shfl_xor_sync(mask, var, laneMask, width) __shfl_xor(var, laneMask, width)\n#endif\n"


def _scan(target, cwd, *args) -> dict:
    """Scan in a subprocess with a timeout: a pipe opened by mistake would block for ever."""
    proc = subprocess.run(
        # --preview: what is read and gated does not depend on which checks are in preview.
        [sys.executable, "-m", "rocmlint", "scan", str(target), "--format", "json", "--show-gated", "--exit-zero", "--no-cache", "--preview", *args],
        cwd=cwd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    document = json.loads(proc.stdout)
    document["stderr"] = proc.stderr
    return document


def _codes(document, key="findings") -> set[tuple[str, str]]:
    return {(os.path.basename(f["path"]), f["code"]) for f in document[key]}


# --- links that leave the project -------------------------------------------------------------


@pytest.mark.parametrize(
    "linked, files",
    [
        ("cmake/gpu.cmake", {"CMakeLists.txt": "include(cmake/gpu.cmake)\n"}),
        ("Makefile", {}),
    ],
)
def test_build_files_linked_from_outside_the_project_are_not_read(tmp_path, linked, files):
    outside = tmp_path / "outside"
    _write(outside, {"gpu.cmake": SPLIT_CMAKE, "Makefile": SPLIT_MAKEFILE})
    root = tmp_path / "proj"
    _write(root, {**files, "a.cu": "int a;\n", "b.cu": PTX})
    (root / linked).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside / os.path.basename(linked), root / linked)
    document = _scan(root, tmp_path)
    # Read, the outside file would gate b.cu as CUDA-only; its text never reaches the report.
    assert _codes(document) == {("b.cu", "ROCM004")} and document["gated"] == []
    # The same file inside the project is read (what the link would have said, said by the project).
    os.unlink(root / linked)
    (root / linked).write_text((outside / os.path.basename(linked)).read_text())
    document = _scan(root, tmp_path)
    assert _codes(document) == set() and _codes(document, "gated") == {("b.cu", "ROCM004")}


def test_a_header_linked_from_outside_the_project_is_not_read(tmp_path):
    outside = tmp_path / "outside"
    _write(outside, {"shim.h": SHIM})
    root = tmp_path / "proj"
    _write(root, {"CMakeLists.txt": "if(USE_ROCM)\n  add_library(a k.cu)\nendif()\n", "k.cu": '#include "shim.h"\n' + MASK})
    os.symlink(outside / "shim.h", root / "shim.h")
    document = _scan(root, tmp_path)
    assert _codes(document) == {("k.cu", "ROCM003")} and document["gated"] == []
    os.unlink(root / "shim.h")
    (root / "shim.h").write_text(SHIM)
    assert [g["gate"] for g in _scan(root, tmp_path)["gated"]] == [
        "HIP shim: shim.h:2 redefines __shfl_xor_sync for HIP without its mask"
    ]


def test_a_link_inside_the_project_is_still_read(tmp_path):
    root = tmp_path / "proj"
    _write(root, {"cmake/real.cmake": SPLIT_CMAKE, "CMakeLists.txt": "include(cmake/gpu.cmake)\n", "a.cu": "int a;\n", "b.cu": PTX})
    os.symlink("real.cmake", root / "cmake" / "gpu.cmake")
    document = _scan(root, tmp_path)
    assert _codes(document) == set() and _codes(document, "gated") == {("b.cu", "ROCM004")}


# --- paths that only look inside --------------------------------------------------------------


def test_a_sibling_folder_that_shares_the_root_s_name_is_outside_it(tmp_path):
    """/x/proj-x2 starts with the text /x/proj-x but is not inside it."""
    _write(tmp_path / "proj-x2", {"gpu.cmake": SPLIT_CMAKE, "sub/CMakeLists.txt": SPLIT_CMAKE})
    root = tmp_path / "proj-x"
    for build in ("include(${CMAKE_SOURCE_DIR}/../proj-x2/gpu.cmake)\n", "add_subdirectory(../proj-x2/sub sub)\n"):
        _write(root, {"CMakeLists.txt": build, "a.cu": "int a;\n", "b.cu": PTX})
        document = _scan(root, tmp_path)
        assert _codes(document) == {("b.cu", "ROCM004")} and document["gated"] == [], build


def test_containment_is_by_path_components():
    from rocmlint.files.tree import is_within

    assert is_within("/x/proj", "/x/proj") and is_within("/x/proj/a/b.cu", "/x/proj") and is_within("/x/a", "/")
    assert not is_within("/x/proj-x2/b.cu", "/x/proj-x") and not is_within("/x/proj-x", "/x/proj-x/a")
    assert not is_within("/x", "/x/proj")


def test_setup_py_globs_stay_inside_the_project(tmp_path, monkeypatch):
    """`glob('/**/*.cu', recursive=True)` walked the whole file system; a glob that leaves the
    project root, or a link to a folder outside it, is not followed."""
    outside = tmp_path / "outside"
    _write(outside, {"deep/x.cu": PTX})
    root = tmp_path / "proj"
    setup = """\
        import glob
        from torch.utils.cpp_extension import CUDAExtension
        sources = glob.glob('/**/*.cu', recursive=True) + glob.glob('../outside/**/*.cu', recursive=True)
        sources += glob.glob(%r, recursive=True) + glob.glob('csrc/**/*.cu', recursive=True)
        ext = CUDAExtension('ext', sources + ['b.cu'])
    """ % str(outside / "**" / "*.cu")
    _write(root, {"setup.py": setup, "csrc/k.cu": "int k;\n", "b.cu": PTX})
    os.symlink(outside, root / "csrc" / "linked")  # a link out of the tree: not walked
    listed = []
    real_scandir = os.scandir

    def watched(path="."):
        absolute = os.path.abspath(path)
        if not (absolute == str(root) or absolute.startswith(str(root) + os.sep)):
            listed.append(absolute)
            raise AssertionError(f"listed a folder outside the project: {absolute}")
        return real_scandir(path)

    monkeypatch.chdir(tmp_path)
    out = tmp_path / "report.json"
    monkeypatch.setattr(os, "scandir", watched)
    try:
        code = main(["scan", str(root), "--format", "json", "--output", str(out), "--show-gated", "--exit-zero", "-q", "--no-cache", "--preview"])
    finally:
        monkeypatch.setattr(os, "scandir", real_scandir)
    assert listed == [] and code == 0
    assert _codes(json.loads(out.read_text())) == {("b.cu", "ROCM004")}


# --- the project root -------------------------------------------------------------------------


def test_a_build_file_in_a_shared_parent_folder_is_not_the_project_root(tmp_path):
    shared = tmp_path / "shared"
    _write(shared, {"CMakeLists.txt": SPLIT_CMAKE.replace("b.cu", "proj/b.cu").replace("a.cu", "proj/a.cu")})
    root = shared / "proj"
    _write(root, {"a.cu": "int a;\n", "b.cu": PTX})
    for target, cwd in ((".", root), (str(root), tmp_path), (str(root / "b.cu"), root)):
        document = _scan(target, cwd)
        assert _codes(document) == {("b.cu", "ROCM004")} and document["gated"] == [], target
    # Asked to scan the shared folder, its build is the project's.
    assert _codes(_scan(shared, tmp_path), "gated") == {("b.cu", "ROCM004")}


def test_a_named_file_finds_its_project_up_to_the_current_directory(tmp_path):
    root = tmp_path / "proj"
    _write(root, {"CMakeLists.txt": SPLIT_CMAKE.replace("b.cu", "sub/b.cu"), "a.cu": "int a;\n", "sub/b.cu": PTX})
    assert _codes(_scan("sub/b.cu", root), "gated") == {("b.cu", "ROCM004")}
    assert _codes(_scan("b.cu", root / "sub")) == {("b.cu", "ROCM004")}


# --- pipes, devices and links to them ---------------------------------------------------------


def test_a_pipe_named_like_a_build_file_is_never_opened(tmp_path):
    root = tmp_path / "proj"
    _write(root, {"k.cu": PTX})
    os.mkfifo(root / "CMakeLists.txt")
    document = _scan(root, tmp_path)
    assert _codes(document) == {("k.cu", "ROCM004")}
    assert "named pipe" in document["stderr"]


@pytest.mark.parametrize("kind", ["fifo", "stdin-link", "device-link"])
def test_a_header_that_is_a_pipe_or_a_device_is_never_read(tmp_path, kind):
    root = tmp_path / "proj"
    _write(root, {"CMakeLists.txt": "if(USE_ROCM)\n  add_library(a k.cu)\nendif()\n", "k.cu": '#include "foo.h"\n' + MASK})
    if kind == "fifo":
        os.mkfifo(root / "foo.h")
    elif kind == "stdin-link":
        os.symlink("/dev/stdin", root / "foo.h")
    else:
        os.symlink("/dev/zero", root / "foo.h")
    reader, writer = os.pipe()  # standard input that never ends: reading it would block
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "rocmlint", "scan", ".", "--format", "json", "--exit-zero", "--no-cache", "--preview"],
            cwd=root, capture_output=True, text=True, timeout=120, stdin=reader,
        )
    finally:
        os.close(reader)
        os.close(writer)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert _codes(json.loads(proc.stdout)) == {("k.cu", "ROCM003")}
