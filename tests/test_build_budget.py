"""Build files that are programs built to never end: the project pass reads them within one work
budget and size caps (rocmlint.build.budget), says which build file it did not fully read, and
gates nothing on it.

Each adversarial project compiles kernel.cu only in its CUDA build, so a fully read build gates
the finding in it (the control case shows it); a build the pass could not fully read leaves the
finding reported, and a skipped-file line names the build file. Scans run in a subprocess with
its address space limited, as a CI runner's memory would be: before the budget, the recursive
cases ran for hours and the expansion bombs ended in `internal error: MemoryError`.
"""

import json
import os
import resource
import subprocess
import sys
import time

import pytest

from rocmlint.build.budget import MAX_DEPTH, MAX_LOOP_ELEMENTS, OutOfBudget, WorkBudget
from rocmlint.build.cmake import read_cmake
from rocmlint.build.makefile import read_makefile

KERNEL = "__global__ void k(float v) { v = __shfl_xor_sync(0xffffffff, v, 1); }\n"
# The ROCm build compiles kernel.hip, the CUDA build kernel.cu.
CMAKE_HEAD = (
    "cmake_minimum_required(VERSION 3.21)\nproject(p LANGUAGES CXX HIP)\n"
    "if(USE_ROCM)\n  add_library(a kernel.hip)\nelse()\n  add_library(b kernel.cu)\nendif()\n"
)
MAKE_HEAD = "ifdef USE_ROCM\nall: kernel.hip\nelse\nall: kernel.cu\nendif\n"
SETUP_HEAD = (
    "import os\nfrom setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
    "if os.environ.get('USE_ROCM'):\n    sources = ['kernel.hip']\nelse:\n    sources = ['kernel.cu']\n"
    "setup(name='p', ext_modules=[CUDAExtension('p', sources)])\n"
)
# Far above what the cases take once bounded (under 10 s on a loaded 2-core machine), far
# below what the recursive ones took before (they did not end in 2 minutes).
BOUND_SECONDS = 60
ADDRESS_SPACE = 2 << 30

ADVERSARIAL = {
    "cmake_self_recursive": ("CMakeLists.txt", CMAKE_HEAD + "function(f n)\n  f(${n})\n  f(${n})\nendfunction()\nf(1)\n"),
    "cmake_mutually_recursive": (
        "CMakeLists.txt",
        CMAKE_HEAD + "function(f n)\n  g(${n})\n  g(${n})\nendfunction()\n"
        "function(g n)\n  f(${n})\n  f(${n})\nendfunction()\nf(1)\n",
    ),
    "cmake_nested_foreach": (
        "CMakeLists.txt",
        CMAKE_HEAD + "foreach(i RANGE 60)\n foreach(j RANGE 60)\n  foreach(k RANGE 60)\n   foreach(l RANGE 60)\n"
        "    set(X ${i}${j}${k}${l})\n   endforeach()\n  endforeach()\n endforeach()\nendforeach()\n",
    ),
    "cmake_string_bomb": ("CMakeLists.txt", CMAKE_HEAD + 'set(A "x")\n' + 'set(A "${A}${A}")\n' * 40),
    "cmake_list_bomb": ("CMakeLists.txt", CMAKE_HEAD + "set(A x)\n" + "set(A ${A} ${A})\n" * 40),
    "cmake_append_bomb": ("CMakeLists.txt", CMAKE_HEAD + "set(A x.cu)\n" + "list(APPEND A ${A})\n" * 40),
    "make_bomb": ("Makefile", MAKE_HEAD + "A := x\n" + "A := $(A)$(A)\n" * 40 + "B := y\n" + "B := $(B) $(B)\n" * 40),
    "setup_py_bomb": ("setup.py", SETUP_HEAD + "a = 'x'\n" + "a = a + a\n" * 40),
}


def _write(root, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _limit_address_space():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def _scan(root, *args) -> tuple[dict, float]:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "rocmlint", "scan", str(root), "--no-cache", "--preview", "--format", "json", "--show-gated",
         "--exit-zero", *args],
        capture_output=True, text=True, timeout=600, preexec_fn=_limit_address_space,
    )
    elapsed = time.perf_counter() - started
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout), elapsed


def _reported(document) -> set[str]:
    return {os.path.basename(f["path"]) for f in document["findings"] if f["code"] == "ROCM003"}


def _gates(document) -> dict[str, str]:
    return {os.path.basename(f["path"]): f["gate"] for f in document["gated"] if f["code"] == "ROCM003"}


def _notes(document, name: str) -> list[str]:
    return [s["reason"] for s in document["skipped"] if os.path.basename(s["path"]) == name]


@pytest.mark.parametrize("build_file", ["CMakeLists.txt", "Makefile", "setup.py"])
def test_a_fully_read_build_gates_the_cuda_only_source(tmp_path, build_file):
    head = {"CMakeLists.txt": CMAKE_HEAD, "Makefile": MAKE_HEAD, "setup.py": SETUP_HEAD}[build_file]
    _write(tmp_path, {build_file: head, "kernel.cu": KERNEL, "kernel.hip": "// hip\n"})
    document, _ = _scan(tmp_path)
    assert _reported(document) == set()
    assert _gates(document)["kernel.cu"].startswith("CUDA-only")
    assert document["skipped"] == []


@pytest.mark.parametrize("case", sorted(ADVERSARIAL))
def test_an_adversarial_build_file_ends_quickly_in_bounded_memory_and_gates_nothing(tmp_path, case):
    name, text = ADVERSARIAL[case]
    _write(tmp_path, {name: text, "kernel.cu": KERNEL, "kernel.hip": "// hip\n"})
    document, elapsed = _scan(tmp_path)
    assert elapsed < BOUND_SECONDS, f"{case}: {elapsed:.1f} s"
    notes = _notes(document, name)
    assert notes and all(n.startswith("build file not fully read: ") for n in notes), document["skipped"]
    assert notes[0].endswith("what it builds is unknown")
    assert _reported(document) == {"kernel.cu"}  # unknown: not gated on what was not read


CAPS = {
    # a.cmake and b.cmake include each other, with nothing to stop them
    "include_cycle": (
        {"CMakeLists.txt": CMAKE_HEAD + "include(a.cmake)\n", "a.cmake": "include(b.cmake)\n", "b.cmake": "include(a.cmake)\n"},
        f"an include cycle through a.cmake (more than {MAX_DEPTH} deep)",
    ),
    "recursion_depth": (
        {"CMakeLists.txt": CMAKE_HEAD + "function(f)\n  f()\nendfunction()\nf()\n"},
        f"calls of f() nested more than {MAX_DEPTH} deep",
    ),
    "foreach_length": (
        {"CMakeLists.txt": CMAKE_HEAD + f"foreach(i RANGE {MAX_LOOP_ELEMENTS + 5})\n  set(X ${{i}})\nendforeach()\n"},
        f"a foreach(RANGE) over more than {MAX_LOOP_ELEMENTS:,} numbers at CMakeLists.txt:8",
    ),
}


@pytest.mark.parametrize("case", sorted(CAPS))
def test_a_cap_that_cuts_the_walk_short_is_noted(tmp_path, case):
    files, why = CAPS[case]
    _write(tmp_path, {**files, "kernel.cu": KERNEL, "kernel.hip": "// hip\n"})
    document, _ = _scan(tmp_path)
    assert _notes(document, "CMakeLists.txt") == [f"build file not fully read: {why}; what it builds is unknown"]
    assert _reported(document) == {"kernel.cu"}


def test_an_include_guard_ends_a_cycle_without_a_note(tmp_path):
    files = {
        "CMakeLists.txt": CMAKE_HEAD + "include(a.cmake)\n",
        "a.cmake": "include_guard(GLOBAL)\ninclude(b.cmake)\n",
        "b.cmake": "include_guard()\ninclude(a.cmake)\n",
    }
    _write(tmp_path, {**files, "kernel.cu": KERNEL, "kernel.hip": "// hip\n"})
    document, _ = _scan(tmp_path)
    assert document["skipped"] == []
    assert _gates(document)["kernel.cu"].startswith("CUDA-only")


def test_a_file_included_many_times_is_read_each_time(tmp_path):
    # No cap on how often one file is read (it was 50): 60 folders include the same helper,
    # and what it compiles in the last folder counts as in the first.
    helper = "if(NOT USE_ROCM)\n  add_library(c late.cu)\nendif()\n"
    files = {"CMakeLists.txt": CMAKE_HEAD + "".join(f"add_subdirectory(d{i})\n" for i in range(60)), "helper.cmake": helper}
    for i in range(60):
        files[f"d{i}/CMakeLists.txt"] = "include(${CMAKE_SOURCE_DIR}/helper.cmake)\n"
    _write(tmp_path, {**files, "kernel.cu": KERNEL, "kernel.hip": "// hip\n", "d59/late.cu": KERNEL})
    document, _ = _scan(tmp_path)
    assert document["skipped"] == []
    assert _gates(document)["late.cu"].startswith("CUDA-only: helper.cmake:2")


def test_a_build_file_the_per_file_pass_skips_for_size_is_not_evaluated(tmp_path):
    padding = "# " + "x" * 98 + "\n"
    text = CMAKE_HEAD + padding * 27_000  # 2.7 MB, over the default max-file-size (1 MiB)
    _write(tmp_path, {"CMakeLists.txt": text, "kernel.cu": KERNEL, "kernel.hip": "// hip\n"})
    document, _ = _scan(tmp_path)
    notes = _notes(document, "CMakeLists.txt")
    assert any(n.startswith("build file not read: ") and "over the size limit of 1048576 bytes" in n for n in notes), notes
    assert _reported(document) == {"kernel.cu"}
    # With no size limit, the project pass reads it too.
    document, _ = _scan(tmp_path, "--max-file-size", "0")
    assert document["skipped"] == []
    assert _gates(document)["kernel.cu"].startswith("CUDA-only")


def test_the_budget_stops_a_walk_and_caps_are_kept_as_reasons(tmp_path):
    _write(tmp_path, {"CMakeLists.txt": ADVERSARIAL["cmake_self_recursive"][1], "kernel.cu": KERNEL})
    entry = str(tmp_path / "CMakeLists.txt")
    budget = WorkBudget(5_000)
    with pytest.raises(OutOfBudget):
        read_cmake(str(tmp_path), [entry], lambda path: open(path, encoding="utf-8").read(), None, budget)
    assert budget.left < 0
    budget = WorkBudget()
    read_makefile(str(tmp_path / "Makefile"), str(tmp_path), ADVERSARIAL["make_bomb"][1], None, budget)
    assert budget.take_limits() == ["a list of more than 20,000 words in Makefile", "a value longer than 1,048,576 characters in Makefile"]
    assert budget.take_limits() == []


@pytest.mark.parametrize("shape", ["assignment", "rule"])
def test_a_one_megabyte_makefile_line_is_read_in_linear_time(tmp_path, shape):
    # Each reference used to copy every expansion built so far: 214 s (assignment) and 286 s
    # (rule line) for these 1 MB lines, now a few seconds.
    line = "SRCS = " + "$(A) x.cu " * 100_000 if shape == "assignment" else "all: " + "$(A) " * 200_000
    started = time.perf_counter()
    facts = read_makefile(str(tmp_path / "Makefile"), str(tmp_path), "A = a.cu\n" + line + "\n")
    assert time.perf_counter() - started < 25
    assert facts.files_read == [str(tmp_path / "Makefile")]


def test_an_included_file_over_the_size_limit_cuts_the_walk_short(tmp_path):
    padding = "# " + "x" * 98 + "\n"
    files = {"CMakeLists.txt": CMAKE_HEAD + "include(big.cmake)\n", "big.cmake": "set(X 1)\n" + padding * 12_000}
    _write(tmp_path, {**files, "kernel.cu": KERNEL, "kernel.hip": "// hip\n"})
    document, _ = _scan(tmp_path)
    assert _notes(document, "CMakeLists.txt") == [
        "build file not fully read: big.cmake not read: 1212009 bytes is over the size limit of 1048576 bytes "
        "(max-file-size); what it builds is unknown"
    ]
    assert _reported(document) == {"kernel.cu"}


@pytest.mark.parametrize("with_kernel", [False, True])
def test_the_per_file_pass_says_so_too_and_once(tmp_path, with_kernel):
    # The build-file checks walk the build too (ROCM301 reads the CMake file): without a C/C++
    # hit there is no project pass, and the per-file pass says the build was not fully read;
    # with one, both passes meet the same cap and it is said once.
    text = ADVERSARIAL["cmake_string_bomb"][1] + "set(CMAKE_CUDA_ARCHITECTURES 80)\n"
    files = {"CMakeLists.txt": text, **({"kernel.cu": KERNEL, "kernel.hip": "// hip\n"} if with_kernel else {})}
    _write(tmp_path, files)
    document, _ = _scan(tmp_path)
    assert _notes(document, "CMakeLists.txt") == [
        "build file not fully read: a value longer than 1,048,576 characters in CMakeLists.txt; what it builds is unknown"
    ]
    assert [f["code"] for f in document["findings"] if f["path"].endswith("CMakeLists.txt")] == ["ROCM301"]
    assert _reported(document) == ({"kernel.cu"} if with_kernel else set())
