"""The build readers: which sources each vendor's build compiles, read from CMake, setup.py and
Makefiles without running them (rocmlint.build)."""

import os
import textwrap

import pytest

from rocmlint.build import CUDA, ROCM
from rocmlint.build.cmake import parse_cmake, read_cmake
from rocmlint.build.makefile import read_makefile
from rocmlint.build.setup_py import read_setup_py
from rocmlint.build.worlds import python_switch_in_world, selects, switch_in_world
from rocmlint.platforms import names_cuda, names_rocm


def _tree(root, files: dict[str, str]) -> str:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return str(root)


def _compiled(facts, root) -> dict[str, set[str]]:
    return {w: {os.path.relpath(p, root).replace(os.sep, "/") for p in facts.compiled[w]} for w in (ROCM, CUDA)}


def _cmake(tmp_path, files):
    root = _tree(tmp_path, files)
    facts = read_cmake(root, [os.path.join(root, "CMakeLists.txt")], lambda p: open(p).read())
    return facts, _compiled(facts, root)


# --- the two worlds ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["USE_ROCM", "HIP_FOUND", "IS_HIP_EXTENSION", "GGML_HIP", "BUILD_AMD", "PYTORCH_FOUND_HIP", "isHip"])
def test_rocm_switches_are_on_in_the_rocm_build_only(name):
    assert names_rocm(name)
    assert switch_in_world(name, ROCM) is True
    assert switch_in_world(name, CUDA) is False


@pytest.mark.parametrize("name", ["CUDA_FOUND", "GGML_CUDA", "CMAKE_CUDA_COMPILER", "CUDAToolkit_FOUND"])
def test_cmake_cuda_switches_are_off_in_the_rocm_build(name):
    assert names_cuda(name)
    assert switch_in_world(name, ROCM) is False
    assert switch_in_world(name, CUDA) is None


@pytest.mark.parametrize("name", ["SKIP_CUDA_BUILD", "GGML_HIP_NO_VMM", "DISABLE_ROCM", "USE_GPU", "CMAKE_SYSTEM_PROCESSOR", "x86_64|amd64"])
def test_opt_outs_and_other_names_are_unknown(name):
    assert switch_in_world(name, ROCM) is None


def test_python_cuda_names_mean_any_gpu_except_nvidia_toolkit_settings():
    assert python_switch_in_world("BUILD_CUDA_EXT", ROCM) is None  # auto-gptq builds it for ROCm too
    assert python_switch_in_world("CUDA_HOME", ROCM) is False
    assert python_switch_in_world("TORCH_CUDA_ARCH_LIST", ROCM) is False
    assert python_switch_in_world("ROCM_HOME", ROCM) is True


def test_vendor_selectors():
    assert selects("hip", ROCM) is True and selects("HIP", ROCM) is True and selects("rocm", ROCM) is True
    assert selects("cuda", ROCM) is False and selects("cuda", CUDA) is True
    assert selects("cpu", ROCM) is None


# --- CMake -------------------------------------------------------------------------------------


def test_cmake_grammar_quoted_bracket_comments_and_nesting():
    commands = parse_cmake(
        textwrap.dedent(
            """\
            # a comment with if(
            set(A "x;y" [[raw ${A}]] z) #[[ bracket
            comment ]] message(STATUS "a\\"b")
            if((A AND NOT B) OR C)
            endif()
            """
        )
    )
    assert [c.name for c in commands] == ["set", "message", "if", "endif"]
    assert [(a.text, a.kind) for a in commands[0].arguments] == [("A", "unquoted"), ("x;y", "quoted"), ("raw ${A}", "bracket"), ("z", "unquoted")]
    assert commands[1].line == 3
    assert [a.text for a in commands[2].arguments] == ["(", "A", "AND", "NOT", "B", ")", "OR", "C"]


def test_cmake_lists_per_vendor_through_a_variable_the_file_sets(tmp_path):
    facts, compiled = _cmake(
        tmp_path,
        {
            "CMakeLists.txt": """
                if (NOT HIP_FOUND AND CUDA_FOUND)
                  set(GPU_LANG "CUDA")
                elseif(HIP_FOUND)
                  set(GPU_LANG "HIP")
                endif()
                set(SRC "csrc/common.cu")
                if(GPU_LANG STREQUAL "CUDA")
                  list(APPEND SRC "csrc/cutlass_gemm.cu")
                  list(APPEND FLAGS "-DENABLE_SM90=1")
                endif()
                if(GPU_LANG STREQUAL "HIP")
                  list(APPEND SRC csrc/rocm/skinny.cu)
                endif()
                add_library(ext ${SRC})
                target_compile_options(ext PRIVATE ${FLAGS})
            """,
            "csrc/common.cu": "",
            "csrc/cutlass_gemm.cu": "",
            "csrc/rocm/skinny.cu": "",
        },
    )
    assert compiled[ROCM] == {"csrc/common.cu", "csrc/rocm/skinny.cu"}
    assert compiled[CUDA] == {"csrc/common.cu", "csrc/cutlass_gemm.cu"}
    origin = facts.compiled[CUDA][os.path.join(str(tmp_path), "csrc/cutlass_gemm.cu")]
    assert (origin.file, origin.line, origin.condition) == ("CMakeLists.txt", 9, 'if(GPU_LANG STREQUAL "CUDA")')
    assert "ENABLE_SM90" in facts.defines[CUDA] and "ENABLE_SM90" not in facts.defines[ROCM]


def test_cmake_unknown_conditions_run_both_branches(tmp_path):
    _, compiled = _cmake(
        tmp_path,
        {
            "CMakeLists.txt": """
                option(WITH_EXTRAS "extras" OFF)
                if(WITH_EXTRAS)
                  add_library(extras extras.cu)
                else()
                  add_library(base base.cu)
                endif()
                if(${CMAKE_CUDA_COMPILER_VERSION} VERSION_GREATER_EQUAL 12.0)
                  add_library(hopper hopper.cu)
                endif()
            """,
            "extras.cu": "",
            "base.cu": "",
            "hopper.cu": "",
        },
    )
    assert compiled[ROCM] == {"extras.cu", "base.cu"}  # no CUDA toolkit, so no CUDA version
    assert compiled[CUDA] == {"extras.cu", "base.cu", "hopper.cu"}


def test_cmake_selector_set_by_the_user(tmp_path):
    _, compiled = _cmake(
        tmp_path,
        {
            "CMakeLists.txt": """
                if(COMPUTE_BACKEND STREQUAL "cuda")
                  set(SRC csrc/ops.cu)
                elseif(COMPUTE_BACKEND STREQUAL "hip")
                  set(SRC csrc/ops.hip)
                elseif(COMPUTE_BACKEND STREQUAL "cpu")
                  set(SRC csrc/cpu_ops.cpp)
                endif()
                add_library(bnb "${SRC}")
            """,
            "csrc/ops.cu": "",
            "csrc/ops.hip": "",
            "csrc/cpu_ops.cpp": "",
        },
    )
    assert compiled[ROCM] == {"csrc/ops.hip"}
    assert compiled[CUDA] == {"csrc/ops.cu"}


def test_cmake_functions_parse_arguments_globs_and_subdirectories(tmp_path):
    _, compiled = _cmake(
        tmp_path,
        {
            "CMakeLists.txt": """
                include(cmake/utils.cmake)
                add_subdirectory(backends/hip)
                if(GGML_CUDA)
                  add_subdirectory(backends/cuda)
                endif()
            """,
            "cmake/utils.cmake": """
                function(add_backend NAME)
                  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
                  add_library(${NAME} ${ARG_SOURCES})
                endfunction()
                macro(collect OUT DIR)
                  file(GLOB ${OUT} "${DIR}/*.cu")
                endmacro()
            """,
            "backends/hip/CMakeLists.txt": """
                if(NOT GGML_HIP)
                  return()
                endif()
                collect(HIP_SRC ${CMAKE_CURRENT_SOURCE_DIR}/../cuda)
                foreach(extra IN ITEMS one two)
                  list(APPEND HIP_SRC ${CMAKE_CURRENT_SOURCE_DIR}/../cuda/extra/${extra}.cu)
                endforeach()
                add_backend(ggml-hip SOURCES ${HIP_SRC})
            """,
            "backends/cuda/CMakeLists.txt": """
                file(GLOB_RECURSE CUDA_SRC *.cu)
                add_backend(ggml-cuda SOURCES ${CUDA_SRC} only_cuda/fattn_sm90.cu)
            """,
            "backends/cuda/mmq.cu": "",
            "backends/cuda/extra/one.cu": "",
            "backends/cuda/extra/two.cu": "",
            "backends/cuda/only_cuda/fattn_sm90.cu": "",
        },
    )
    assert compiled[ROCM] == {"backends/cuda/mmq.cu", "backends/cuda/extra/one.cu", "backends/cuda/extra/two.cu"}
    assert "backends/cuda/only_cuda/fattn_sm90.cu" in compiled[CUDA]
    assert "backends/cuda/only_cuda/fattn_sm90.cu" not in compiled[ROCM]


def test_cmake_directories_named_like_sources_are_not_sources(tmp_path):
    _, compiled = _cmake(tmp_path, {"CMakeLists.txt": "add_library(a vendor/llama.cpp x.cpp)\n", "vendor/llama.cpp/a.h": "", "x.cpp": ""})
    assert compiled[ROCM] == {"x.cpp"}


def test_cmake_broken_file_reads_what_it_can(tmp_path):
    _, compiled = _cmake(tmp_path, {"CMakeLists.txt": 'if(X\nadd_library(a "unterminated\n', "a.cu": ""})
    assert compiled == {ROCM: set(), CUDA: set()}


# --- setup.py ----------------------------------------------------------------------------------


def _setup(tmp_path, text, files=()):
    root = _tree(tmp_path, {"setup.py": text, **{f: "" for f in files}})
    path = os.path.join(root, "setup.py")
    facts = read_setup_py(path, root, open(path).read())
    return facts, _compiled(facts, root)


def test_setup_py_one_list_per_vendor(tmp_path):
    facts, compiled = _setup(
        tmp_path,
        """
        import os, glob
        from torch.utils.cpp_extension import CUDAExtension, IS_HIP_EXTENSION
        BUILD_TARGET = os.environ.get("BUILD_TARGET", "auto")
        if BUILD_TARGET == "auto":
            IS_ROCM = IS_HIP_EXTENSION
        else:
            IS_ROCM = BUILD_TARGET == "rocm"
        SKIP_CUDA_BUILD = os.getenv("SKIP_CUDA_BUILD", "FALSE") == "TRUE"
        ext_modules = []
        if not SKIP_CUDA_BUILD and not IS_ROCM:
            ext_modules.append(CUDAExtension("fa", sources=["csrc/fa/api.cpp"] + glob.glob("csrc/fa/src/*.cu")))
        elif not SKIP_CUDA_BUILD and IS_ROCM:
            sources = ["csrc/ck/api.cpp"]
            renamed = [s.replace(".cpp", ".cu") for s in sources]  # a build step copies them
            ext_modules.append(CUDAExtension("fa", sources=renamed, extra_compile_args={"nvcc": ["-DCK_TILE=1"]}))
        """,
        ["csrc/fa/api.cpp", "csrc/fa/src/fwd_sm80.cu", "csrc/ck/api.cpp"],
    )
    assert compiled[ROCM] == {"csrc/ck/api.cpp"}
    assert compiled[CUDA] == {"csrc/fa/api.cpp", "csrc/fa/src/fwd_sm80.cu"}
    origin = facts.compiled[CUDA][os.path.join(str(tmp_path), "csrc/fa/api.cpp")]
    assert origin.condition == "if not SKIP_CUDA_BUILD and not IS_ROCM" and origin.line == 12
    assert facts.defines[ROCM]["CK_TILE"][0] == "1"


def test_setup_py_lists_that_flow_into_one_extension(tmp_path):
    _, compiled = _setup(
        tmp_path,
        """
        import glob, os, torch
        from torch.utils.cpp_extension import CUDAExtension, CUDA_HOME
        this_dir = os.path.dirname(os.path.abspath(__file__))

        def get_extensions():
            extensions_dir = os.path.join("pkg", "csrc")
            sources = glob.glob(os.path.join(extensions_dir, "**", "*.cpp"), recursive=True)
            source_cuda = glob.glob(os.path.join(extensions_dir, "**", "*.cu"), recursive=True)
            source_hip = glob.glob(os.path.join(this_dir, extensions_dir, "hip_*", "*.hip"))
            if (torch.cuda.is_available() and CUDA_HOME is not None and torch.version.cuda is not None) \\
                    or os.getenv("FORCE_CUDA", "0") == "1":
                sources += source_cuda
            elif torch.version.hip:
                sources += source_hip
            return [CUDAExtension("pkg._C", sorted(sources))]

        setup(ext_modules=get_extensions())
        """,
        ["pkg/csrc/ops.cpp", "pkg/csrc/sparse24/gemm.cu", "pkg/csrc/hip_fmha/fwd.hip"],
    )
    assert compiled[ROCM] == {"pkg/csrc/ops.cpp", "pkg/csrc/hip_fmha/fwd.hip"}
    assert compiled[CUDA] == {"pkg/csrc/ops.cpp", "pkg/csrc/sparse24/gemm.cu"}


def test_setup_py_functions_nobody_calls_are_builders(tmp_path):
    _, compiled = _setup(
        tmp_path,
        """
        class EvoformerBuilder(CUDAOpBuilder):
            def sources(self):
                src_dir = "csrc/evoformer"
                return [f"{src_dir}/attention.cpp", f"{src_dir}/attention_cu.cu"]

            def nvcc_args(self):
                if self.is_rocm_pytorch():
                    return []
                return ["-lcurand"]
        """,
        ["csrc/evoformer/attention.cpp", "csrc/evoformer/attention_cu.cu"],
    )
    assert compiled[ROCM] == compiled[CUDA] == {"csrc/evoformer/attention.cpp", "csrc/evoformer/attention_cu.cu"}


def test_setup_py_build_ext_switch_that_also_builds_for_rocm(tmp_path):
    _, compiled = _setup(
        tmp_path,
        """
        import os
        BUILD_CUDA_EXT = int(os.environ.get("BUILD_CUDA_EXT", "1")) == 1
        ROCM_VERSION = os.environ.get("ROCM_VERSION", None)
        exts = []
        if BUILD_CUDA_EXT:
            exts.append(CUDAExtension("q", ["ext/q.cu"]))
            if not ROCM_VERSION:
                exts.append(CUDAExtension("marlin", ["ext/marlin.cu"]))
        setup(ext_modules=exts)
        """,
        ["ext/q.cu", "ext/marlin.cu"],
    )
    assert compiled[ROCM] == {"ext/q.cu"}
    assert compiled[CUDA] == {"ext/q.cu", "ext/marlin.cu"}


def test_setup_py_torch_version_string_names_the_vendor(tmp_path):
    _, compiled = _setup(
        tmp_path,
        """
        import torch
        if "cu" in torch.__version__ and CUDA_HOME is not None:
            setup(ext_modules=[CUDAExtension("m", ["csrc/ops.cu"])])
        """,
        ["csrc/ops.cu"],
    )
    assert compiled[ROCM] == set() and compiled[CUDA] == {"csrc/ops.cu"}


def test_setup_py_syntax_error_is_a_problem_not_a_crash(tmp_path):
    facts, compiled = _setup(tmp_path, "def broken(:\n")
    assert facts.problems and "SyntaxError" in facts.problems[0]
    assert compiled == {ROCM: set(), CUDA: set()}


# --- Makefiles ---------------------------------------------------------------------------------


def test_makefile_conditionals_and_variables(tmp_path):
    root = _tree(
        tmp_path,
        {
            "Makefile": """\
                CUDA_SRCS = src/a.cu src/b.cu
                HIP_SRCS := src/hip_a.cpp
                SRCS = src/common.cpp

                ifeq ($(BUILD_AMD),1)
                  SRCS += $(HIP_SRCS)
                  CFLAGS += -DUSE_HIP
                else ifeq ($(GPU),cpu)
                  SRCS += src/cpu.cpp
                else
                  SRCS += $(CUDA_SRCS) $(wildcard src/cuda_extra/*.cu)
                endif

                lib.so: $(SRCS)
                \t$(CXX) $(CFLAGS) -shared -o $@ $^
            """,
            "src/a.cu": "", "src/b.cu": "", "src/hip_a.cpp": "", "src/common.cpp": "", "src/cpu.cpp": "",
            "src/cuda_extra/c.cu": "",
        },
    )
    path = os.path.join(root, "Makefile")
    facts = read_makefile(path, root, open(path).read())
    compiled = _compiled(facts, root)
    assert compiled[ROCM] == {"src/common.cpp", "src/hip_a.cpp"}
    # `$(GPU)` may be "cpu" in an NVIDIA build too: the reader cannot tell
    assert compiled[CUDA] == {"src/common.cpp", "src/cpu.cpp", "src/a.cu", "src/b.cu", "src/cuda_extra/c.cu"}
    origin = facts.compiled[CUDA][os.path.join(root, "src/a.cu")]
    assert origin.line == 11 and origin.condition.startswith("else of")
    assert "USE_HIP" in facts.defines[ROCM]
