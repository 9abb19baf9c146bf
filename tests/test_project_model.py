"""The project model: hits in code the project's ROCm build never compiles are gated, with the
reason, and the same code in a file ROCm does compile is still reported (rocmlint.project).

Each case is a small project written to a temporary directory and scanned through the CLI
entry point, as a user would scan it.
"""

import json
import os

import pytest

from conftest import write_files as _project
from rocmlint.cli import main

MASK = "__device__ float sum(float v) { return v + __shfl_xor_sync(0xffffffff, v, 16); }\n"
PTX = '__device__ unsigned lane() { unsigned id; asm volatile("mov.u32 %0, %%laneid;" : "=r"(id)); return id; }\n'
CUTLASS = "#include <cutlass/gemm/device/gemm.h>\n"


def _scan(root, *args) -> dict:
    out = os.path.join(os.path.dirname(os.path.abspath(root)), "report.json")
    # --preview: what the project model gates does not depend on which checks are in preview.
    code = main(["scan", str(root), "--format", "json", "--output", out, "--show-gated", "--exit-zero", "-q", "--preview", *args])
    assert code == 0
    with open(out, encoding="utf-8") as handle:
        document = json.load(handle)
    return document


def _reported(document, root) -> set[tuple[str, str]]:
    return {(os.path.relpath(f["path"], root).replace(os.sep, "/"), f["code"]) for f in document["findings"]}


def _gated(document, root) -> dict[tuple[str, str], str]:
    return {(os.path.relpath(f["path"], root).replace(os.sep, "/"), f["code"]): f["gate"] for f in document["gated"]}


@pytest.fixture
def cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_cmake_cuda_only_sources_are_gated_and_rocm_sources_reported(cwd):
    root = _project(
        cwd / "proj",
        {
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
            "csrc/common.cu": MASK,
            "csrc/cutlass_gemm.cu": CUTLASS + MASK,
        },
    )
    document = _scan(root)
    assert _reported(document, root) == {("csrc/common.cu", "ROCM003")}
    gated = _gated(document, root)
    assert set(gated) == {("csrc/cutlass_gemm.cu", "ROCM003"), ("csrc/cutlass_gemm.cu", "ROCM005")}
    assert gated[("csrc/cutlass_gemm.cu", "ROCM005")] == (
        "CUDA-only: CMakeLists.txt:9 (under `if(GPU_LANG STREQUAL \"CUDA\")`, line 8) compiles it for the CUDA build; "
        "the ROCm build never does"
    )


def test_a_project_with_no_rocm_side_is_being_ported_and_everything_is_reported(cwd):
    root = _project(
        cwd / "proj",
        {
            "CMakeLists.txt": """
                if(WITH_SM90)
                  add_library(ext csrc/sm90.cu)
                endif()
            """,
            "csrc/sm90.cu": CUTLASS,
        },
    )
    assert _reported(_scan(root), root) == {("csrc/sm90.cu", "ROCM005")}


def test_setup_py_vendor_lists_and_headers_reached_only_from_cuda_sources(cwd):
    root = _project(
        cwd / "proj",
        {
            "setup.py": """
                import torch
                from torch.utils.cpp_extension import CUDAExtension
                if torch.version.hip:
                    sources = ["csrc/ck/api.cpp"]
                else:
                    sources = ["csrc/fa/api.cu"]
                setup(ext_modules=[CUDAExtension("fa", sources)])
            """,
            "csrc/fa/api.cu": '#include "kernel_traits.h"\n' + MASK,
            "csrc/fa/kernel_traits.h": CUTLASS,
            "csrc/ck/api.cpp": '#include "ck_utils.h"\n',
            "csrc/ck/ck_utils.h": MASK,
        },
    )
    document = _scan(root)
    assert _reported(document, root) == {("csrc/ck/ck_utils.h", "ROCM003")}
    gated = _gated(document, root)
    assert gated[("csrc/fa/kernel_traits.h", "ROCM005")] == (
        "CUDA-only: included only by code the ROCm build never compiles: csrc/fa/api.cu "
        "(compiled by setup.py:7 (under `else of if torch.version.hip`, line 4))"
    )


def test_makefile_gpu_switch(cwd):
    root = _project(
        cwd / "proj",
        {
            "Makefile": """\
                ifeq ($(BUILD_AMD),1)
                  SRCS = kernels_hip.cpp
                else
                  SRCS = kernels_ptx.cu
                endif
                lib.so: $(SRCS)
                \t$(CXX) -shared -o $@ $^
            """,
            "kernels_hip.cpp": MASK,
            "kernels_ptx.cu": PTX,
        },
    )
    document = _scan(root)
    assert _reported(document, root) == {("kernels_hip.cpp", "ROCM003")}
    assert ("kernels_ptx.cu", "ROCM004") in _gated(document, root)


def test_feature_macros_defined_only_for_nvidia(cwd):
    root = _project(
        cwd / "proj",
        {
            "setup.py": "if IS_ROCM:\n    pass\nsetup(ext_modules=[CUDAExtension('k', ['csrc/k.cu'])])\n",
            "csrc/utils.h": """\
                #pragma once
                #ifdef __HIP_PLATFORM_AMD__
                #define HALF_AVAILABLE 1
                #else
                #if __CUDA_ARCH__ >= 530
                #define PTX_AVAILABLE
                #endif
                #endif
            """,
            "csrc/k.cu": '#include "utils.h"\n#ifdef PTX_AVAILABLE\n' + PTX + "#endif\n" + "#ifdef SOMETHING_ELSE\n" + PTX + "#endif\n",
        },
    )
    document = _scan(root)
    assert {(p, c) for p, c in _reported(document, root)} == {("csrc/k.cu", "ROCM004")}
    reported_lines = [f["line"] for f in document["findings"]]
    assert reported_lines == [6]
    gate = _gated(document, root)[("csrc/k.cu", "ROCM004")]
    assert "PTX_AVAILABLE is defined only where HIP-Clang never compiles (csrc/utils.h:6" in gate


def test_a_hip_shim_that_drops_the_mask_gates_the_call(cwd):
    root = _project(
        cwd / "proj",
        {
            "CMakeLists.txt": """
                if(GGML_HIP)
                  add_compile_definitions(GGML_USE_HIP)
                  add_library(ggml-hip common/reduce.cu)
                else()
                  add_library(ggml-cuda common/reduce.cu)
                endif()
            """,
            "common/common.cuh": '#if defined(GGML_USE_HIP)\n#include "vendors/hip.h"\n#else\n#include "vendors/cuda.h"\n#endif\n',
            "common/vendors/hip.h": "#define __shfl_xor_sync(mask, var, laneMask, width) __shfl_xor(var, laneMask, width)\n",
            "common/vendors/cuda.h": "#include <cuda_runtime.h>\n",
            "common/reduce.cu": '#include "common.cuh"\n' + MASK + "__device__ int votes(bool p) { return __popc(__ballot_sync(0xffffffff, p)); }\n",
            "other/standalone.cu": MASK,
        },
    )
    document = _scan(root)
    gated = _gated(document, root)
    assert gated[("common/reduce.cu", "ROCM003")] == (
        "HIP shim: common/vendors/hip.h:1 redefines __shfl_xor_sync for HIP without its mask"
    )
    # The shim covers only what it redefines (not the ballot on line 3), and only files that include it.
    findings = [(os.path.basename(f["path"]), f["line"]) for f in document["findings"]]
    assert findings == [("reduce.cu", 3), ("reduce.cu", 3), ("standalone.cu", 1)]


def test_a_shim_that_keeps_the_mask_is_no_fix(cwd):
    root = _project(
        cwd / "proj",
        {
            "CMakeLists.txt": "if(USE_ROCM)\n  add_library(a k.cu)\nendif()\n",
            "hip_compat.h": "#define __shfl_xor_sync(mask, v, l, w) __shfl_xor_sync((unsigned long long)(mask), v, l, w)\n",
            "k.cu": '#include "hip_compat.h"\n' + MASK,
        },
    )
    assert _reported(_scan(root), root) == {("k.cu", "ROCM003")}


def test_project_macros_can_reopen_what_the_file_alone_took_for_dead_code(cwd):
    # A HIP shim header that defines __CUDA_ARCH__ makes `#if __CUDA_ARCH__ >= 800` code HIP code.
    root = _project(
        cwd / "proj",
        {
            "CMakeLists.txt": "if(GGML_HIP)\n  add_library(g k.cu)\nendif()\n",
            "vendors/hip.h": "#pragma once\n#define __CUDA_ARCH__ 1300\n#define CC_AMPERE 800\n#define CC_SPARK 1210\n",
            "k.cu": '#include "vendors/hip.h"\n#if __CUDA_ARCH__ >= 800\n' + MASK + "#endif\n#if __CUDA_ARCH__ == CC_SPARK\n" + PTX + "#endif\n",
        },
    )
    document = _scan(root)
    assert _reported(document, root) == {("k.cu", "ROCM003")}
    assert "__CUDA_ARCH__ is 1300 under HIP (vendors/hip.h:2)" in _gated(document, root)[("k.cu", "ROCM004")]
    # ...and the `#if __CUDA_ARCH__` feature gates are not reported: HIP code defines it here.
    assert "the project defines it for HIP" in _gated(document, root)[("k.cu", "ROCM206")]
    # The file alone reads __CUDA_ARCH__ as undefined under HIP, and CC_SPARK as unknown.
    assert _reported(_scan(root, "--no-project"), root) == {("k.cu", "ROCM004"), ("k.cu", "ROCM206")}


def test_platform_macros_the_project_derives(cwd):
    root = _project(
        cwd / "proj",
        {
            "CMakeLists.txt": "if(BUILD_HIP)\n  add_library(b k.cu)\nendif()\n",
            "common.h": "#if defined(__HIP_PLATFORM_AMD__)\n#define WAVE64 1\n#endif\n",
            "k.cu": '#include "common.h"\n#if WAVE64\nvoid amd();\n#else\n' + MASK + "#endif\n",
        },
    )
    document = _scan(root)
    assert _reported(document, root) == set()
    assert _gated(document, root)[("k.cu", "ROCM003")] == "inside `#if WAVE64` (line 2), code for one GPU stack"


def test_vendored_code_only_counts_where_the_rocm_build_reaches_it(cwd):
    root = _project(
        cwd / "proj",
        {
            "setup.py": """
                if torch.version.hip:
                    srcs = ["csrc/hip/k.cpp"]
                else:
                    srcs = ["csrc/k.cu"]
                setup(ext_modules=[CUDAExtension("k", srcs, include_dirs=["third_party/lib/include"])])
            """,
            "csrc/k.cu": '#include "lib/gemm.h"\n',
            "csrc/hip/k.cpp": '#include "lib/common.h"\n',
            "third_party/lib/include/lib/gemm.h": PTX,
            "third_party/lib/include/lib/common.h": MASK,
            "third_party/lib/examples/example.cu": PTX,
        },
    )
    document = _scan(root)
    assert _reported(document, root) == {("third_party/lib/include/lib/common.h", "ROCM003")}
    gated = _gated(document, root)
    assert gated[("third_party/lib/examples/example.cu", "ROCM004")] == (
        "vendored: third_party/lib is in third_party/, a directory of third-party code; "
        "the ROCm build neither compiles this file nor includes it"
    )
    assert gated[("third_party/lib/include/lib/gemm.h", "ROCM004")].startswith("CUDA-only: included only by")


def test_a_copied_library_used_only_for_its_headers_is_vendored(cwd):
    root = _project(
        cwd / "proj",
        {
            "setup.py": """
                if torch.version.hip:
                    srcs = ["csrc/hip.cpp"]
                else:
                    srcs = ["csrc/k.cu"]
                setup(ext_modules=[CUDAExtension("k", srcs, include_dirs=["csrc/cutlass/include"])])
            """,
            "csrc/k.cu": "#include <cutlass/cutlass.h>\n",
            "csrc/hip.cpp": "int x;\n",
            "csrc/cutlass/include/cutlass/cutlass.h": PTX,
            "csrc/cutlass/test/unit/gemm.cu": CUTLASS,
        },
    )
    document = _scan(root)
    assert _reported(document, root) == set()
    assert "another project's code" in _gated(document, root)[("csrc/cutlass/test/unit/gemm.cu", "ROCM005")]


def test_orphan_headers_next_to_cuda_only_sources(cwd):
    root = _project(
        cwd / "proj",
        {
            "CMakeLists.txt": "if(HIP_FOUND)\nadd_library(a rocm/a.cu)\nelse()\nadd_library(m marlin/marlin.cu)\nendif()\n",
            "rocm/a.cu": "int a;\n",
            "marlin/marlin.cu": "int m;\n",
            "marlin/marlin_template.h": '#include "marlin_mma.h"\n',  # included by generated sources only
            "marlin/marlin_mma.h": PTX,
            "shared/orphan.h": PTX,
        },
    )
    document = _scan(root)
    assert _reported(document, root) == {("shared/orphan.h", "ROCM004")}
    assert "every source beside it is CUDA-only (e.g. marlin/marlin.cu)" in _gated(document, root)[("marlin/marlin_mma.h", "ROCM004")]


def test_configuration_overrides_for_builds_rocmlint_cannot_read(cwd):
    root = _project(
        cwd / "proj",
        {
            "pyproject.toml": '[tool.rocmlint]\ncuda-only = ["csrc/sm90/"]\nrocm-sources = ["csrc/sm90/portable.cu"]\n',
            "CMakeLists.txt": "if(USE_ROCM)\n  add_library(a csrc/a.cu)\nendif()\n",
            "csrc/a.cu": MASK,
            "csrc/sm90/tma.cu": PTX,
            "csrc/sm90/portable.cu": MASK,
        },
    )
    document = _scan(root)
    assert _reported(document, root) == {("csrc/a.cu", "ROCM003"), ("csrc/sm90/portable.cu", "ROCM003")}
    assert _gated(document, root)[("csrc/sm90/tma.cu", "ROCM004")] == "CUDA-only: declared in pyproject.toml [tool.rocmlint] cuda-only"


def test_a_single_file_finds_its_project(cwd):
    root = _project(
        cwd / "proj",
        {
            "CMakeLists.txt": "if(USE_ROCM)\n  add_library(a csrc/a.cu)\nelse()\n  add_library(b csrc/sub/b.cu)\nendif()\n",
            "csrc/a.cu": MASK,
            "csrc/sub/b.cu": MASK,
        },
    )
    document = _scan(os.path.join(root, "csrc", "sub", "b.cu"))
    assert document["findings"] == [] and document["gated_count"] == 1
    document = _scan(os.path.join(root, "csrc", "sub", "b.cu"), "--no-project")
    assert len(document["findings"]) == 1 and document["gated_count"] == 0


def test_gated_hits_in_text_and_sarif(cwd, capsys):
    root = _project(
        cwd / "proj",
        {"CMakeLists.txt": "if(USE_ROCM)\n  add_library(a a.cu)\nelse()\n  add_library(b b.cu)\nendif()\n", "a.cu": "int a;\n", "b.cu": PTX},
    )
    assert main(["scan", root]) == 0
    text = capsys.readouterr().out
    assert "Found 0 findings (3 files checked, 1 gated hit not reported: --show-gated lists them)." in text  # a.cu, b.cu, CMakeLists.txt
    assert main(["scan", root, "--show-gated"]) == 0
    text = capsys.readouterr().out
    assert "b.cu:1:" in text and "    gated: CUDA-only: CMakeLists.txt:4 (under `else of if(USE_ROCM)`, line 3)" in text
    assert main(["scan", root, "--format", "sarif", "--show-gated"]) == 0
    sarif = json.loads(capsys.readouterr().out)
    (result,) = sarif["runs"][0]["results"]
    assert result["suppressions"] == [{"kind": "external", "justification": result["suppressions"][0]["justification"]}]
    assert result["suppressions"][0]["justification"].startswith("CUDA-only: CMakeLists.txt:4")
    assert main(["scan", root, "--format", "sarif"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["results"] == []


def test_unreadable_build_files_are_reported_and_the_scan_goes_on(cwd):
    root = _project(cwd / "proj", {"setup.py": "if IS_ROCM:\n  def broken(:\n", "k.cu": PTX})
    document = _scan(root)
    assert _reported(document, root) == {("k.cu", "ROCM004")}


def test_library_headers_stay_quiet_only_where_build_time_hipify_rewrites_them(cwd):
    root = _project(
        cwd / "proj",
        {
            "setup.py": """
                from setuptools import setup
                from torch.utils.cpp_extension import CUDAExtension
                setup(ext_modules=[CUDAExtension("ext", ["csrc/ops.cu"])])
            """,
            "csrc/ops.cu": '#include <cublas_v2.h>\n#include <cusolverDn.h>\n#include "nccl.h"\n#include <nccl.h>\n',
            "tools/standalone.cu": "#include <cublas_v2.h>\n",
        },
    )
    document = _scan(root, "--select", "ROCM213")
    lines = {(os.path.basename(f["path"]), f["line"]) for f in document["findings"]}
    # PyTorch's hipify maps <cublas_v2.h> and <nccl.h>, not cuSOLVER's header or "nccl.h" in quotes;
    # a file no torch extension build compiles is not hipified at all.
    assert lines == {("ops.cu", 2), ("ops.cu", 3), ("standalone.cu", 1)}
    gates = [f["gate"] for f in document["gated"]]
    assert len(gates) == 2 and all(g.startswith("hipified at build time: setup.py:3 builds it with torch.utils.cpp_extension") for g in gates)


def test_op_builders_outside_setup_py_hipify_the_sources_they_name(cwd):
    # DeepSpeed's layout: op_builder/builder.py builds with torch.utils.cpp_extension; the op
    # modules beside it name their sources relative to the package root.
    root = _project(
        cwd / "proj",
        {
            "setup.py": "from setuptools import setup\nfrom op_builder import ALL_OPS\nsetup(name='p')\n",
            "op_builder/builder.py": """
                class CUDAOpBuilder:
                    def builder(self):
                        from torch.utils.cpp_extension import CUDAExtension
                        return CUDAExtension(name=self.name, sources=self.sources())
            """,
            "op_builder/adam.py": """
                from .builder import CUDAOpBuilder
                class FusedAdamBuilder(CUDAOpBuilder):
                    def sources(self):
                        return ['csrc/adam/fused_adam.cu']
            """,
            "op_builder/xpu/builder.py": "from torch.utils.cpp_extension import SyclExtension\n",
            "op_builder/xpu/adam.py": "from .builder import X\ndef sources(): return ['csrc/xpu/adam.cpp']\n",
            "csrc/adam/fused_adam.cu": '#include "context.h"\n',
            "csrc/includes/context.h": "#include <cublas_v2.h>\n",
            "csrc/xpu/adam.cpp": "#include <cublas_v2.h>\n",
            "pkg/ops/csrc/adam/fused_adam.cu": "#include <curand_kernel.h>\n",
        },
    )
    document = _scan(root, "--select", "ROCM213")
    gated = _gated(document, root)
    assert set(gated) == {("csrc/includes/context.h", "ROCM213"), ("pkg/ops/csrc/adam/fused_adam.cu", "ROCM213")}
    assert "op_builder/adam.py:5 names it for a torch.utils.cpp_extension build (op_builder/builder.py:4)" in gated[
        ("pkg/ops/csrc/adam/fused_adam.cu", "ROCM213")
    ]
    # A SYCL build is no hipify.
    assert _reported(document, root) == {("csrc/xpu/adam.cpp", "ROCM213")}


def test_a_hip_shim_that_defines_an_intrinsic_gates_calls_of_it(cwd):
    root = _project(
        cwd / "proj",
        {
            "CMakeLists.txt": "if(GGML_HIP)\n  add_library(g common.cu)\nelse()\n  add_library(c common.cu)\nendif()\n",
            "common.cuh": '#if defined(GGML_USE_HIP)\n#include "vendors/hip.h"\n#endif\n',
            "vendors/hip.h": "#define __trap() do { abort(); __builtin_unreachable(); } while (0)\n",
            "common.cu": '#include "common.cuh"\n__device__ void stop() { __trap(); }\n__device__ void nap() { __nanosleep(10); }\n',
        },
    )
    document = _scan(root, "--select", "ROCM211")
    assert _gated(document, root)[("common.cu", "ROCM211")] == "HIP shim: vendors/hip.h:1 defines __trap for HIP"
    assert [f["line"] for f in document["findings"]] == [3]


def test_checks_of_code_hip_compiles_read_the_amd_side_of_a_stack_test(cwd):
    root = _project(
        cwd / "proj",
        {
            "k.cu": """
                #ifdef USE_ROCM
                __device__ float a(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }
                #else
                __device__ float b(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }
                #endif
                #if WAVE64
                __device__ float c(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }
                #else
                __device__ float d(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }
                #endif
                #ifdef USE_ROCM
                #define BOUNDS __launch_bounds__(512, 4)
                #endif
            """,
        },
    )
    document = _scan(root, "--select", "ROCM003,ROCM207", "--no-project")
    # ROCM003 reads the AMD side; ROCM207 (a port's own AMD bounds) does not. WAVE64 says nothing
    # about a GPU stack here, so both of its sides are code HIP may compile.
    assert [(f["code"], f["line"]) for f in document["findings"]] == [("ROCM003", 3), ("ROCM003", 8), ("ROCM003", 10)]
    assert sorted((f["code"], f["line"]) for f in document["gated"]) == [("ROCM003", 5), ("ROCM207", 13)]


def test_a_project_that_builds_for_amd_only_writes_launch_bounds_for_hip(cwd):
    files = {
        "CMakeLists.txt": "project(k LANGUAGES CXX HIP)\nadd_library(k k.hip)  # -Wno-nvcc-compat is a clang flag\n",
        "k.hip": "__global__ void __launch_bounds__(1024, 2) k(float* x) {}\n",
    }
    document = _scan(_project(cwd / "amd", files), "--select", "ROCM207")
    assert document["findings"] == []
    assert document["gated"][0]["gate"].startswith("the project in amd/ builds for AMD only")
    files["CMakeLists.txt"] = "if(USE_ROCM)\n  project(k LANGUAGES CXX HIP)\nelse()\n  project(k LANGUAGES CXX CUDA)\nendif()\nadd_library(k k.hip)\n"
    document = _scan(_project(cwd / "both", files), "--select", "ROCM207")
    assert [f["line"] for f in document["findings"]] == [1]


def test_a_compiler_macro_defined_for_an_ide_is_not_defined_for_hip(cwd):
    root = _project(
        cwd / "proj",
        {
            "setup.py": "from torch.utils.cpp_extension import CUDAExtension\nsetup(ext_modules=[CUDAExtension('e', ['k.cu'])])\n",
            "ide_hint.cuh": "#ifdef IS_IN_IDE_PARSER\n#define __CUDA_ARCH__ 900\n#endif\n",
            "k.cu": '#include "ide_hint.cuh"\n#if __CUDA_ARCH__ >= 800\n__device__ void f();\n#endif\n',
        },
    )
    assert _reported(_scan(root, "--select", "ROCM206"), root) == {("k.cu", "ROCM206")}


def test_a_sub_project_setup_py_the_build_does_not_read_still_hipifies_its_sources(cwd):
    root = _project(
        cwd / "proj",
        {
            "setup.py": "from setuptools import setup\nsetup(name='p')\n",
            "csrc/dense/setup.py": """
                from torch.utils.cpp_extension import CUDAExtension
                setup(ext_modules=[CUDAExtension("dense", ["dense.cpp", "dense_cuda.cu"])])
            """,
            "csrc/dense/dense_cuda.cu": "#include <cublas_v2.h>\n",
        },
    )
    document = _scan(root, "--select", "ROCM213")
    assert document["findings"] == []
    assert "csrc/dense/setup.py:3 names it for a torch.utils.cpp_extension build" in document["gated"][0]["gate"]


def test_gates_that_are_not_the_files_conditions_survive_the_project_pass(cwd):
    # The file tests a project macro, so the project pass reads its conditions again; the file
    # being written for AMD is no condition and must still hold.
    root = _project(
        cwd / "proj",
        {
            "CMakeLists.txt": "if(USE_ROCM)\n  add_library(k k.hip)\nendif()\n",
            "config.h": "#if defined(__HIP_PLATFORM_AMD__)\n#define WAVE64 1\n#endif\n",
            "k.hip": '#include "config.h"\n#if WAVE64\nint w = 64;\n#endif\n'
            "__device__ int half(int lane_idx) { return (lane_idx / 32) + warpSize; }\n"
            "__device__ int r(int x) { return __builtin_amdgcn_readfirstlane(x); }\n",
        },
    )
    document = _scan(root, "--select", "ROCM202")
    assert document["findings"] == []
    assert _gated(document, root)[("k.hip", "ROCM202")].startswith("the file is written for AMD GPUs")


def test_kernels_compiled_just_in_time_from_modules_imported_only_for_nvidia_are_cuda_only(cwd):
    root = _project(
        cwd / "proj",
        {
            "pyproject.toml": "[project]\nname = 'pkg'\n",
            "pkg/__init__.py": "",
            "pkg/jit/__init__.py": "",
            "pkg/jit/awq.py": "def build():\n    return load_jit('awq', cuda_files=['gemm/awq.cuh'])\n",
            "pkg/jit/cache.py": "def build():\n    return load_jit('cache', cuda_files=['cache.cuh'])\n",
            "pkg/jit/csrc/gemm/awq.cuh": PTX,
            "pkg/jit/csrc/cache.cuh": PTX,
            "pkg/layers/__init__.py": "",
            "pkg/layers/quant.py": "from pkg.utils import is_cuda\nif is_cuda():\n    from pkg.jit.awq import build\n",
            "pkg/layers/memory.py": "from pkg.jit import cache\n",
            "pkg/jit/tests/test_cache.py": "if is_cuda():\n    from pkg.jit.cache import build\n",
        },
    )
    document = _scan(root, "--select", "ROCM004")
    # awq.cuh: built only by a module imported under `if is_cuda():`; cache.cuh: imported on every stack.
    assert _reported(document, root) == {("pkg/jit/csrc/cache.cuh", "ROCM004")}
    assert _gated(document, root)[("pkg/jit/csrc/gemm/awq.cuh", "ROCM004")] == (
        "CUDA-only: compiled just in time by pkg/jit/awq.py:2, which the project imports only on the NVIDIA side "
        "(pkg/layers/quant.py:3)"
    )


NVIDIA_PACKAGE = {
    "setup.py": """\
        from torch.utils.cpp_extension import CUDAExtension, IS_HIP_EXTENSION
        setup(name="kernels", ext_modules=[CUDAExtension("k", ["csrc/k.cu"])])
        """,
    "csrc/k.cu": MASK,
    "cute/pyproject.toml": '[project]\nname = "kernels-cute"\n',
    "cute/setup.py": 'from setuptools import setup\nsetup(name="kernels-cute", packages=["cute"])\n',
    "cute/CMakeLists.txt": "project(cute LANGUAGES CXX CUDA)\nset(CMAKE_CUDA_FLAGS \"-arch=sm_90a\")\n",
    "cute/csrc/gemm.cu": PTX,
    "cute/cute/monitor.py": "import pynvml\n",
}


def test_a_package_built_apart_for_nvidia_only_in_a_project_that_builds_for_amd_is_gated(cwd):
    root = _project(cwd / "proj", NVIDIA_PACKAGE)
    document = _scan(root)
    assert _reported(document, root) == {("csrc/k.cu", "ROCM003")}
    gated = _gated(document, root)
    for hit in (("cute/csrc/gemm.cu", "ROCM004"), ("cute/cute/monitor.py", "ROCM001"), ("cute/CMakeLists.txt", "ROCM301")):
        assert gated[hit].startswith("NVIDIA-only package: cute/ is built on its own (cute/setup.py)"), hit


def test_in_a_project_with_no_amd_side_its_packages_are_all_reported(cwd):
    files = dict(NVIDIA_PACKAGE, **{"setup.py": 'from torch.utils.cpp_extension import CUDAExtension\nsetup(name="kernels")\n'})
    root = _project(cwd / "proj", files)
    assert {("cute/csrc/gemm.cu", "ROCM004"), ("cute/cute/monitor.py", "ROCM001"), ("cute/CMakeLists.txt", "ROCM301")} <= _reported(
        _scan(root), root
    )


def test_a_git_submodule_checkout_belongs_to_the_project_that_holds_it(cwd):
    """Source archives keep a submodule's `.git` file; its code is the holder's vendored code."""
    root = _project(
        cwd / "proj",
        {
            "CMakeLists.txt": "project(p LANGUAGES CXX HIP)\n",
            "third_party/lib/CMakeLists.txt": "project(lib LANGUAGES CXX CUDA)\n",
            "third_party/lib/.git": "gitdir: ../../.git/modules/third_party/lib\n",
            "third_party/lib/k.cu": MASK,
        },
    )
    gated = _gated(_scan(root), root)
    assert gated[("third_party/lib/k.cu", "ROCM003")].startswith("vendored")


def test_flake8_leaves_a_package_built_apart_for_nvidia_only_alone_as_the_scanner_does(cwd):
    import subprocess
    import sys

    root = _project(cwd / "proj", dict(NVIDIA_PACKAGE, **{"tool.py": "import pynvml\n"}))
    proc = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "ROCM", "--format", "%(path)s|%(code)s", "cute/cute/monitor.py", "tool.py"],
        cwd=root, capture_output=True, text=True,
    )
    assert proc.stdout.split() == ["./tool.py|ROCM001"] or proc.stdout.split() == ["tool.py|ROCM001"], proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("text", "says_rocm"),
    [("hipcc", True), ("USE_HIP", True), ("CMAKE_HIP_ARCHITECTURES", True), ("LANGUAGES CXX HIP)", True),
     ("IS_HIP_EXTENSION", True), ("torch.version.hip", True), ("rocm6.2", True), ("GGML_HIP", True),
     ("ship them", False), ("sudachipy", False), ("USE_SHIPPED_BOOST", False)],
)
def test_a_build_file_has_a_rocm_side_when_it_names_rocm_or_hip_not_a_word_with_hip_inside(text, says_rocm):
    from rocmlint.build.project_root import ROCM_TEXT

    assert bool(ROCM_TEXT.search(text)) is says_rocm


def test_an_import_of_a_package_the_project_declares_is_not_a_missing_package(cwd):
    """ROCM001: with nvidia-ml-py declared, `import pynvml` succeeds on ROCm; nvmlInit() fails."""
    code = "import pynvml\npynvml.nvmlInit()\n"
    declared = _project(cwd / "declared", {"setup.py": "setup(name='d')\n", "requirements.txt": "nvidia-ml-py>=12\n", "mon.py": code})
    bare = _project(cwd / "bare", {"setup.py": "setup(name='b')\n", "mon.py": code})
    document = _scan(declared)
    assert sorted(f["line"] for f in document["findings"] if f["code"] == "ROCM001") == [2]
    assert _gated(document, declared)[("mon.py", "ROCM001")] == (
        "the project declares nvidia-ml-py (requirements.txt) as a dependency: the import succeeds wherever it is installed"
    )
    assert sorted(f["line"] for f in _scan(bare)["findings"] if f["code"] == "ROCM001") == [1, 2]


WARP_CONSTANT = "__device__ float reduce(float v) {\n  float buf[2 * warpSize];\n  return buf[0];\n}\n"


def test_warpsize_as_a_constant_is_reported_where_hip_alone_compiles_it(tmp_path):
    """ROCM205 is true only of code HIP alone compiles: CUDA's warpSize was never constant, so
    a .cu file nvcc compiles uses the project's own constant. A project that builds for AMD
    only compiles its .cu files with hipcc: there it is HIP's warpSize, and reported."""
    amd_only = _project(tmp_path / "amd", {
        "CMakeLists.txt": "project(k LANGUAGES CXX HIP)\nset_source_files_properties(k.cu PROPERTIES LANGUAGE HIP)\nadd_library(k k.cu)\n",
        "k.cu": WARP_CONSTANT,
    })
    assert ("k.cu", "ROCM205") in _reported(_scan(amd_only, "--select", "ROCM205"), amd_only)
    nvidia = _project(tmp_path / "nv", {
        "CMakeLists.txt": "project(k LANGUAGES CXX CUDA)\nadd_library(k k.cu)\n",
        "k.cu": WARP_CONSTANT,
    })
    document = _scan(nvidia, "--select", "ROCM205")
    assert ("k.cu", "ROCM205") not in _reported(document, nvidia)
    assert _gated(document, nvidia)[("k.cu", "ROCM205")].startswith("code nvcc compiles as well")


def test_headers_of_pytorchs_cuda_build_in_an_installed_torch_are_gated(tmp_path):
    """torch/include/ATen/native/cuda/... of an installed CUDA torch: the ROCm build compiles
    the hipified copy; torch/include/ATen/core/... is compiled for ROCm as it is."""
    root = _project(tmp_path, {
        "site/torch/__init__.py": "",
        "site/torch/include/ATen/native/cuda/Loops.cuh": CUTLASS,
        "site/torch/include/ATen/core/Tensor.h": CUTLASS,
        "site/other/include/ATen/native/cuda/Loops.cuh": CUTLASS,
    })
    document = _scan(os.path.join(root, "site"), "--select", "ROCM005")
    reported = _reported(document, os.path.join(root, "site"))
    assert ("torch/include/ATen/core/Tensor.h", "ROCM005") in reported
    assert ("other/include/ATen/native/cuda/Loops.cuh", "ROCM005") in reported
    gated = _gated(document, os.path.join(root, "site"))
    assert gated[("torch/include/ATen/native/cuda/Loops.cuh", "ROCM005")].startswith("a header of PyTorch's CUDA build")


def test_a_model_read_in_another_process_answers_as_the_one_read_here(cwd):
    # A scan with worker processes has one of them read a project's build (the model comes
    # back pickled): every answer the project pass asks of it must be the same.
    import pickle

    from rocmlint.project import build_model

    root = _project(
        cwd / "proj",
        {
            "CMakeLists.txt": """
                if(USE_ROCM)
                  set(GPU_LANG HIP)
                  add_compile_definitions(FAST_SHFL=1)
                else()
                  set(GPU_LANG CUDA)
                  enable_language(CUDA)
                endif()
                set(SRC csrc/common.cu csrc/rocm_only.cu)
                if(GPU_LANG STREQUAL "CUDA")
                  list(APPEND SRC csrc/cutlass_gemm.cu)
                endif()
                add_library(ext ${SRC})
            """,
            "csrc/common.cu": '#include "shared.h"\n#if FAST_SHFL\n' + MASK + "#endif\n",
            "csrc/shared.h": "#pragma once\n#ifdef USE_ROCM\n#define TILE 64\n#else\n#define TILE 32\n#endif\n",
            "csrc/rocm_only.cu": '#include "amd.h"\n' + MASK,
            "csrc/amd.h": "#pragma once\n" + MASK,
            "csrc/cutlass_gemm.cu": CUTLASS + '#include "shared.h"\n' + MASK,
        },
    )
    here = build_model(root)
    files = [os.path.join(root, "csrc", name) for name in ("common.cu", "shared.h", "rocm_only.cu", "amd.h", "cutlass_gemm.cu")]

    def answers(model):
        found = []
        for path in files:
            gates = model.gates_for(path)
            found.append((
                model.file_gate(path), model.cuda_build_gate(path), model.hipify_gate(path), model.runtime_shim_for(path),
                model.verdict(path), model.macros_for(path).facts, [gates.reason(n, True) for n in range(1, 8)] if gates else None,
            ))
        return found

    # Answers kept by the ids of objects name other objects in another process: not carried.
    here.sources._changed[(id(here), id(root))] = frozenset({"TILE"})
    there = pickle.loads(pickle.dumps(here))
    assert there.cuda_reach is not None and there.sources._changed == {}
    assert answers(there) == answers(here)
    assert any(a[1] for a in answers(here)) and any(a[0] for a in answers(here))  # both sides of the build answer
