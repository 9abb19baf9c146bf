"""C/C++ hits that the project decides: 32-lane code reported where the project has no AMD side,
the CUDA runtime surface of files no build step hipifies, and ROCm-only code where the CUDA
build compiles it (rocmlint.project). Each case is a small project in a temporary directory,
scanned through the CLI entry point.
"""

import json
import os

import pytest

from conftest import write_files as _project
from rocmlint.cli import main

# A kernel that keeps to 32-lane groups: nothing in it works with the whole wavefront.
GROUPS_32 = """
    #define WARP_SIZE 32
    __global__ void reduce(const float* x, float* out) {
      const int lane = threadIdx.x & 31;
      const int warp = threadIdx.x >> 5;
      float v = x[threadIdx.x];
      for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffffffffffull, v, o, 32);
      if (lane == 0) out[warp] = v;
    }
    void launch(const float* x, float* out, int n) {
      reduce<<<n, 4 * WARP_SIZE>>>(x, out);
    }
"""
NVIDIA_SETUP = "from setuptools import setup\nsetup(name='p')\n"
# A project that builds for both vendors: its setup.py asks whether torch is a ROCm build.
AMD_SETUP = (
    "import torch\nfrom setuptools import setup\nIS_ROCM = torch.version.hip is not None\n"
    "flags = [] if IS_ROCM else ['-gencode', 'arch=compute_90,code=sm_90']\nsetup(name='p')\n"
)


def _scan(root, *args) -> dict:
    out = os.path.join(os.path.dirname(os.path.abspath(root)), "report.json")
    code = main(["scan", str(root), "--format", "json", "--output", out, "--show-gated", "--exit-zero", "-q", "--preview", *args])
    assert code == 0
    with open(out, encoding="utf-8") as handle:
        return json.load(handle)


def _hits(document, key) -> dict[tuple[str, int], dict]:
    return {(f["code"], f["line"]): f for f in document[key]}


@pytest.fixture
def cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


# --- 32-lane code -----------------------------------------------------------------------------


def test_32_lane_code_is_reported_where_the_project_has_no_amd_side(cwd):
    root = _project(cwd / "nv", {"setup.py": NVIDIA_SETUP, "csrc/k.cu": GROUPS_32})
    reported = _hits(_scan(root, "--select", "ROCM201,ROCM202,ROCM203,ROCM204,ROCM221"), "findings")
    assert set(reported) == {("ROCM204", 2), ("ROCM202", 4), ("ROCM202", 5), ("ROCM203", 7), ("ROCM201", 7), ("ROCM221", 11)}
    assert "nothing in this code works with the whole wavefront yet" in reported[("ROCM202", 4)]["message"]
    assert "must define it per target" in reported[("ROCM204", 2)]["message"]
    assert "with a warp of 32 lanes" in reported[("ROCM221", 11)]["message"]


def test_32_lane_code_stays_gated_where_the_project_runs_on_amd(cwd):
    root = _project(cwd / "amd", {"setup.py": AMD_SETUP, "csrc/k.cu": GROUPS_32})
    document = _scan(root, "--select", "ROCM201,ROCM202,ROCM203,ROCM204,ROCM221")
    assert document["findings"] == []
    gated = _hits(document, "gated")
    assert set(gated) == {("ROCM204", 2), ("ROCM202", 4), ("ROCM202", 5), ("ROCM203", 7), ("ROCM201", 7), ("ROCM221", 11)}
    assert all(g["gate"].startswith("keeps to 32-lane groups") for g in gated.values())


def test_a_gate_of_the_file_stays_with_the_32_lane_gate_in_a_project_with_no_amd_side(cwd):
    text = "#ifdef USE_ROCM\n__global__ void k(int* o) { o[0] = threadIdx.x & 31; }\n#endif\n"
    root = _project(cwd / "nv", {"setup.py": NVIDIA_SETUP, "k.cu": text})
    document = _scan(root, "--select", "ROCM202")
    assert document["findings"] == []
    assert _hits(document, "gated")[("ROCM202", 2)]["gate"].startswith("inside `#ifdef USE_ROCM`")


def test_32_lane_code_that_meets_the_wavefront_is_reported_in_both_kinds(cwd):
    text = GROUPS_32.replace("if (lane == 0)", "if (threadIdx.x % warpSize == 0)")
    for name, setup in (("nv", NVIDIA_SETUP), ("amd", AMD_SETUP)):
        reported = _hits(_scan(_project(cwd / name, {"setup.py": setup, "k.cu": text}), "--select", "ROCM202"), "findings")
        assert set(reported) == {("ROCM202", 4), ("ROCM202", 5)}, name
        assert "`warpSize`" in reported[("ROCM202", 4)]["message"]


def test_rdna_target_settles_32_lane_code_of_a_project_with_no_amd_side(cwd):
    root = _project(cwd / "nv", {"setup.py": NVIDIA_SETUP, "csrc/k.cu": GROUPS_32})
    document = _scan(root, "--select", "ROCM202,ROCM221", "--arch", "gfx1100")
    assert document["findings"] == []
    assert all(g["gate"].startswith("target:") for g in document["gated"])


# --- the CUDA runtime surface -------------------------------------------------------------------

RUNTIME = """
    #include <cuda_runtime.h>
    void copy(float* dst, const float* src, size_t n, cudaStream_t stream) {
      cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyDeviceToDevice, stream);
    }
"""


def test_cuda_runtime_of_a_file_no_build_step_hipifies_is_reported_once(cwd):
    cmake = "project(p LANGUAGES CXX CUDA)\nadd_library(p csrc/copy.cu)\n"
    root = _project(cwd / "p", {"CMakeLists.txt": cmake, "csrc/copy.cu": RUNTIME})
    reported = _hits(_scan(root, "--select", "ROCM218"), "findings")
    assert list(reported) == [("ROCM218", 2)]
    assert "4 CUDA runtime names" in reported[("ROCM218", 2)]["message"]


def test_cuda_runtime_of_a_torch_extension_is_hipified_by_its_build(cwd):
    setup = (
        "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension, BuildExtension\n"
        "setup(name='p', ext_modules=[CUDAExtension('p', ['csrc/copy.cu'])], cmdclass={'build_ext': BuildExtension})\n"
    )
    root = _project(cwd / "p", {"setup.py": setup, "csrc/copy.cu": RUNTIME})
    document = _scan(root, "--select", "ROCM218")
    assert document["findings"] == []
    assert _hits(document, "gated")[("ROCM218", 2)]["gate"].startswith("hipified at build time")


def test_cuda_runtime_renamed_by_a_hip_shim_header_is_not_reported(cwd):
    shim = """
        #pragma once
        #if defined(__HIP_PLATFORM_AMD__)
        #include <hip/hip_runtime.h>
        #define cudaStream_t hipStream_t
        #define cudaMemcpyAsync hipMemcpyAsync
        #define cudaMemcpyDeviceToDevice hipMemcpyDeviceToDevice
        #else
        #include <cuda_runtime.h>
        #endif
    """
    text = '#include "compat.h"\nvoid copy(float* d, const float* s, size_t n, cudaStream_t st) {\n  cudaMemcpyAsync(d, s, n, cudaMemcpyDeviceToDevice, st);\n}\n'
    cmake = "project(p LANGUAGES CXX CUDA HIP)\nif(USE_ROCM)\nadd_library(p csrc/copy.cu)\nelse()\nadd_library(p csrc/copy.cu)\nendif()\n"
    root = _project(cwd / "p", {"CMakeLists.txt": cmake, "csrc/copy.cu": text, "csrc/compat.h": shim})
    document = _scan(root, "--select", "ROCM218")
    assert [f for f in document["findings"] if f["path"].endswith("copy.cu")] == []
    gate = _hits(document, "gated")[("ROCM218", 2)]["gate"]
    assert gate.startswith("HIP shim: csrc/compat.h renames 3 CUDA runtime names")


# --- ROCm-only code where the CUDA build compiles it -------------------------------------------


def test_rocm_only_code_is_reported_only_where_the_cuda_build_compiles_it(cwd):
    cmake = """
        project(p LANGUAGES CXX)
        if(USE_ROCM)
          enable_language(HIP)
          add_library(p csrc/common.cu csrc/rocm/skinny.cu)
        else()
          enable_language(CUDA)
          set(CMAKE_CUDA_ARCHITECTURES 90)
          add_library(p csrc/common.cu)
        endif()
    """
    files = {
        "CMakeLists.txt": cmake,
        "csrc/common.cu": '#include "fast.cuh"\n#include <hip/hip_bf16.h>\n',
        "csrc/fast.cuh": "__device__ int p(int a, int b, int s) { return __builtin_amdgcn_perm(a, b, s); }\n",
        "csrc/rocm/skinny.cu": '#include "rocm/mfma.h"\n#include <hip/hip_runtime.h>\n',
        "csrc/rocm/mfma.h": "__device__ float m(float a) { return __builtin_amdgcn_readfirstlane(a); }\n",
        # No build names it, and the build files name what the CUDA build compiles.
        "tools/probe.cu": "#include <hip/hip_runtime.h>\n",
    }
    document = _scan(_project(cwd / "p", files), "--select", "ROCM220")
    reported = {(os.path.basename(f["path"]), f["line"]) for f in document["findings"]}
    assert reported == {("common.cu", 2), ("fast.cuh", 1)}
    gated = {os.path.basename(f["path"]): f["gate"] for f in document["gated"]}
    assert gated["skinny.cu"].startswith("ROCm-only: the CUDA build never compiles it")
    assert gated["mfma.h"].startswith("ROCm-only:")
    assert gated["probe.cu"].startswith("ROCm-only: no file the CUDA build compiles includes it")


def test_rocm_only_code_of_a_project_that_builds_for_amd_only_is_not_reported(cwd):
    cmake = "project(p LANGUAGES CXX HIP)\nadd_library(p csrc/k.cu)\n"
    files = {"CMakeLists.txt": cmake, "csrc/k.cu": "#include <hip/hip_runtime.h>\n"}
    document = _scan(_project(cwd / "p", files), "--select", "ROCM220")
    assert document["findings"] == []
    assert "builds for AMD only" in document["gated"][0]["gate"]


def test_a_makefile_that_compiles_with_hipcc_builds_for_amd_only(cwd):
    makefile = "CXX = hipcc\nCFLAGS = --offload-arch=gfx942\nall: bench\nbench: bench.cu\n\t$(CXX) $(CFLAGS) -o $@ bench.cu\n"
    cmake = (
        "project(p LANGUAGES CXX)\nif(USE_ROCM)\n  enable_language(HIP)\nelse()\n  enable_language(CUDA)\n"
        "  set(CMAKE_CUDA_ARCHITECTURES 90)\nendif()\nadd_library(p csrc/common.cu)\n"
    )
    files = {
        "CMakeLists.txt": cmake,
        "csrc/common.cu": "__global__ void k() {}\n",
        "tools/Makefile": makefile,
        "tools/bench.cu": "#include <hip/hip_runtime.h>\n",
    }
    document = _scan(_project(cwd / "p", files), "--select", "ROCM220")
    assert document["findings"] == []
    assert document["gated"][0]["gate"].startswith("ROCm-only: the CUDA build never compiles it: tools/Makefile")


def test_cuda_runtime_in_the_headers_of_an_installed_torch_is_left_to_its_rocm_build(cwd):
    files = {
        "site/torch/__init__.py": "",
        "site/torch/include/ATen/Device.h": "#include <cuda_runtime.h>\ncudaStream_t current();\n",
    }
    document = _scan(_project(cwd, files) + "/site/torch", "--select", "ROCM218")
    assert document["findings"] == []
    assert "a ROCm PyTorch ships its own hipified headers" in document["gated"][0]["gate"]
