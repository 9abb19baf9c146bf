"""PreprocessorGates: which lines of a C/C++/CUDA file sit inside a ROCm/HIP-gated region.

Each case is a source where the lines ending in `// G` must be gated and every other line
must not be; the marker is a comment, so it never changes what the gates read. A directive
line that leaves a gated branch (`#elif`, `#else`, `#endif`) still counts as part of it; the
line that opens a chain belongs to the code around it.

Besides ROCm/HIP tests, a branch that HIP-Clang never compiles is gated: `#if 0`, and branches
that need a macro only NVIDIA's compilers define (`__CUDA_ARCH__`, `__NVCC__`, ...).
"""

import pytest

from rocmlint.cpp.gates import PreprocessorGates
from rocmlint.cpp.preprocessor import ConditionUnderHip as _ConditionUnderHip, condition_names_platform


def _expected(source: str) -> list[int]:
    return [n for n, line in enumerate(source.split("\n"), start=1) if line.rstrip().endswith("// G")]


def _gated(source: str) -> list[int]:
    gates = PreprocessorGates(source)
    return [n for n in range(1, source.count("\n") + 2) if gates.is_gated(n)]


CASES = {
    "ifdef-else-endif": """\
void a();
#ifdef USE_ROCM
void rocm(); // G
#else // G
void nvidia(); // G
#endif // G
void b();
""",
    "if-defined-or": """\
#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)
using mask_t = unsigned long long; // G
#else // G
using mask_t = unsigned; // G
#endif // G
""",
    # A branch that both builds compile is code for both stacks, though its test names one:
    # the device pass of either compiler, or ROCm and a recent CUDA alike.
    "shared-branch-both-stacks": """\
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
int device_side = threadIdx.x % 32;
#else // G
int host_side; // G
#endif // G
#if defined(USE_ROCM) || (defined(CUDA_VERSION) && CUDA_VERSION >= 12000)
int both;
#endif
#if (__CUDA_ARCH__ >= 300) || (defined(__HIP_PLATFORM_AMD__) && HIP_VERSION >= 502)
int modern;
#else // G
int old_gpus; // G
#endif // G
#ifdef USE_ROCM
int only_rocm; // G
#elif defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__) // G
int nvidia_device; // G
#endif // G
""",
    "ifndef": """\
#ifndef USE_ROCM
#include <cutlass/cutlass.h> // G
#endif // G
int x;
""",
    "not-defined": """\
#if !defined(USE_ROCM) && CUDA_VERSION >= 12000
void tma(); // G
#endif // G
""",
    "elif-gates-from-there-on": """\
#if defined(ENABLE_SM90)
void sm90();
#elif defined(__HIP__) // G
void hip(); // G
#else // G
void other(); // G
#endif // G
void after();
""",
    "elifdef": """\
#ifdef FAST_PATH
void fast();
#elifdef __HIP_PLATFORM_AMD__ // G
void amd(); // G
#endif // G
""",
    "nested-inside-gate": """\
#ifdef USE_ROCM
#  if WAVE == 64 // G
void w64(); // G
#  else // G
void w32(); // G
#  endif // G
void rocm(); // G
#endif // G
void common();
""",
    "gate-nested-inside-plain-chain": """\
#if BUILD_KERNELS
void k();
#  ifndef USE_ROCM
void nv(); // G
#  endif // G
void k2();
#else
void none();
#endif
""",
    "if-zero": """\
#if 0
this is not code, it's a note // G
#endif // G
#if 0 // disabled for now
void old(); // G
#else // G
void current();
#endif
#if (0)
void older(); // G
#elif FEATURE // G
void feature();
#endif
""",
    "include-guard-is-not-a-gate": """\
#ifndef ROCM_HELPERS_H
#define ROCM_HELPERS_H

void helper();
#ifdef USE_ROCM
void rocm(); // G
#endif // G
void more();

#endif  // ROCM_HELPERS_H
""",
    "include-guard-if-not-defined": """\
#if !defined(HIP_COMPAT_CUH_)
#define HIP_COMPAT_CUH_
void helper();
#endif
""",
    "comments-in-conditions": """\
#if defined(FAST) /* USE_ROCM is handled below */
void fast();
#endif
#ifdef USE_CUDA // not for ROCm builds
void cuda_only();
#endif
#if /* AMD GPUs */ defined(__HIP_PLATFORM_AMD__)
void amd(); // G
#endif // G
""",
    "directives-in-comments-and-strings-are-not-directives": """\
/*
#ifdef USE_ROCM
*/
void a();
const char* src = R"(
#ifdef USE_ROCM
)";
void b();
// #ifdef USE_ROCM
void c();
""",
    "cpu-arch-macros-are-not-gpu-gates": """\
#if defined(__amd64__) || defined(_M_AMD64)
void x86();
#endif
#ifdef __x86_64__
void x86_64();
#endif
""",
    "has-include": """\
#if __has_include(<hip/hip_runtime.h>)
#include <hip/hip_runtime.h> // G
#elif __has_include("cuda_runtime.h") // G
#include <cuda_runtime.h> // G
#endif // G
#if __has_include("hip/hip_fp16.h")
void half(); // G
#endif // G
""",
    "nvidia-compiler-only-branch": """\
__device__ unsigned bfe(unsigned v, int pos, int len) {
#if !defined(__CUDA_ARCH__)
  return (v >> pos) & ((1u << len) - 1);
#else // G
  unsigned r; // G
  asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(v), "r"(pos), "r"(len)); // G
  return r; // G
#endif // G
}
""",
    "cuda-arch-feature-branch": """\
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  cp_async(); // G
#elif defined(FOO) // G
  foo();
#else
  plain_load();
#endif
#if __CUDA_ARCH__ < 700
  legacy();
#else // G
  volta(); // G
#endif // G
#ifdef __CUDA_ARCH__
  device_pass(); // G
#else // G
  host_pass();
#endif
#if defined(__CUDA_ARCH__) || defined(FOO)
  maybe();
#endif
#if 1
  always();
#else // G
  never(); // G
#endif // G
""",
    "unbalanced-endif-is-harmless": """\
#endif
void a();
#ifdef __HIPCC__
void b(); // G
#endif // G
void c();
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gated_lines(name):
    source = CASES[name]
    assert _gated(source) == _expected(source)


def test_backslash_continued_condition():
    source = (
        "#if defined(FOO) && \\\n"  # 1
        "    defined(__HIPCC__)\n"  # 2: the condition names HIP only here
        "void hip();\n"  # 3
        "#endif\n"  # 4
        "#if defined(FOO) && \\   \n"  # 5: spaces after the backslash still continue
        "    (HIP_VERSION >= 60000)\n"  # 6
        "void hip6();\n"  # 7
        "#endif\n"  # 8
        "#if defined(FOO) && \\\n"  # 9
        "    defined(BAR)\n"  # 10
        "void plain();\n"  # 11
        "#endif\n"  # 12
        "#define X \\\n"  # 13: a continued #define is no conditional
        "  defined(__HIPCC__)\n"  # 14
        "void after();\n"  # 15
    )
    assert _gated(source) == [3, 4, 7, 8]


def test_unterminated_gate_runs_to_the_end_of_the_file():
    source = "void a();\n#ifdef USE_ROCM\nvoid b();\n"
    assert _gated(source) == [3, 4]


@pytest.mark.parametrize(
    "condition,value",
    [
        ("0", 0),
        ("(0)", 0),
        ("false", 0),
        ("1", 1),
        ("FOO", None),
        # CUDA's toolkit version: undefined under HIP, or TORCH_HIP_VERSION (~700) after
        # PyTorch's hipify; below every CUDA release either way, defined or not unknown.
        ("CUDA_VERSION >= 12000", 0),
        ("defined(CUDART_VERSION) && CUDART_VERSION >= 11000", 0),
        ("!defined(CUDA_VERSION) || CUDA_VERSION < 11000", 1),
        ("defined(CUDA_VERSION)", None),
        ("defined(__CUDA_ARCH__)", 0),
        ("defined __CUDA_ARCH__", 0),
        ("!defined(__CUDA_ARCH__)", 1),
        ("__CUDA_ARCH__ >= 800", 0),
        ("__CUDA_ARCH__ < 800", 1),
        ("defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800", 0),
        ("defined(FOO) && defined(__CUDA_ARCH__)", 0),
        ("!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700", 1),
        ("defined(__CUDA_ARCH__) || defined(FOO)", None),
        ("defined(__CUDA_ARCH_FEAT_SM90_ALL)", 0),
        ("__CUDACC_VER_MAJOR__ >= 12", 0),
        ("defined(__CUDACC__)", None),
        ("__has_include(<hip/hip_runtime.h>)", None),
        ("FOO(1, 2) && 0", 0),
        ("1 + 2 * 3 == 7 && (2 << 3) == 16 && 0x10 == 16 && 010 == 8", 1),
        ("FOO ? 0 : 0", 0),
        ("10 / 0", None),
        ("0 && (", None),
    ],
)
def test_condition_value_under_hip_clang(condition, value):
    assert _ConditionUnderHip.value(condition) == value


def test_lines_outside_the_file_are_not_gated():
    gates = PreprocessorGates("#ifdef USE_ROCM\nx\n#endif\n")
    assert not gates.is_gated(0)
    assert not gates.is_gated(-1)
    assert not gates.is_gated(99)


@pytest.mark.parametrize(
    "condition",
    [
        "defined(USE_ROCM)",
        "!defined(USE_ROCM)",
        "defined(__HIP_PLATFORM_AMD__)",
        "defined(__HIP_PLATFORM_HCC__)",
        "defined(__HIPCC__)",
        "defined(__HIP__)",
        "defined(__HIP_DEVICE_COMPILE__)",
        "ROCM_VERSION >= 60200",
        "HIP_VERSION_MAJOR >= 6",
        "__AMDGCN_WAVEFRONT_SIZE == 64",
        "defined(__gfx942__)",
        "defined(__NVCC__)",
        "USE_ROCM // comment",
    ],
)
def test_platform_conditions(condition):
    assert condition_names_platform(condition)


@pytest.mark.parametrize(
    "condition",
    [
        "defined(__CUDACC__) && CUDA_VERSION >= 11000",
        "defined(USE_CUDA)",
        "defined(__amd64__)",
        "defined(_M_AMD64)",
        "defined(__x86_64__)",
        "0",
        "defined(FOO) /* not USE_ROCM */",
        "defined(FOO) // USE_ROCM later",
    ],
)
def test_conditions_that_are_not_platform_tests(condition):
    assert not condition_names_platform(condition)


def test_fast_directive_scan_agrees_with_the_exact_one():
    """The project pass reads every file with the fast scanner; on real and tricky sources it
    must find the same directives as the exact one the per-file gates use."""
    from conftest import REPO

    from rocmlint.cpp.preprocessor import scan_directives

    tricky = (
        '#include "a.h" // trailing comment\n'
        "/* #if 0\n#endif */\n"
        'const char* src = R"nvrtc(\n#if BROKEN\n)nvrtc";\n'
        'auto u = u8R"(#define X)";\n'
        "#if defined(USE_ROCM) /* why */ && \\\n    FOO\n#define Y 1\n#endif\n"
        "  #  ifdef   __HIPCC__\n#endif\n"
    )
    for text in (tricky, (REPO / "tests" / "data" / "fused_norm.cu").read_text(encoding="utf-8")):
        exact = [(d.line, d.last_line, d.keyword, d.text) for d in scan_directives(text)]
        fast = [(d.line, d.last_line, d.keyword, d.text) for d in scan_directives(text, exact=False)]
        assert fast == exact
    assert [d.keyword for d in scan_directives(tricky, exact=False)] == ["include", "if", "define", "endif", "ifdef", "endif"]
