"""The C/C++ function matchers (rocmlint.cpp.rules) on the forms real kernels use,
beyond each check's own examples."""

import pytest

from rocmlint.engine import check_source, select_checks
from rocmlint.cpp.rules import ptx_evidence
from rocmlint.source import SourceFile


def _lines(code: str, check_id: str, path: str = "k.cu") -> list[int]:
    findings, _ = check_source(SourceFile(path, code, "cpp"), select_checks([check_id], preview=True))
    return [f.line for f in findings]


@pytest.mark.parametrize(
    "template, evidence",
    [
        ("mov.u32 %0, %%laneid;", "mov.u32"),
        ("ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%4];", "ld.global.nc.v4.f32"),
        ("bar.arrive 1, 256;", "bar.arrive"),
        ("fence.proxy.async.shared::cta;", "fence.proxy.async.shared::cta"),
        ("max.NaN.f32 %0, %1, %2;", "max.NaN.f32"),
        ("{ .reg .pred p; setp.ne.b32 p, %1, 0; @p red.relaxed.global.add.f32 [%0], %2; }", "setp.ne.b32"),
        ("mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;", "mbarrier.try_wait.parity.shared::cta.b64"),
        ("prefetchu.L1 [%0];", "prefetchu.L1"),
        ("mov.u64 %0, %%globaltimer;", "mov.u64"),
        ("trap;", "trap"),
        (".reg .b32 r0;", ".reg .b32"),
    ],
)
def test_ptx_is_recognised_by_its_grammar(template, evidence):
    assert ptx_evidence(template) == evidence


@pytest.mark.parametrize(
    "template",
    [
        "",  # a compiler barrier
        "s_waitcnt vmcnt(0)\n buffer_load_dword %0, %1, 0 offen",  # GCN/CDNA
        "v_mbcnt_lo_u32_b32 %0, -1, 0",  # RDNA/CDNA
        "global_load_dwordx4 %0, %1, off offset:16",
        "fcvt.ps.f16 %0, %1",  # RISC-V (ggml-et)
        "fbcx.ps %0, %1",
        "vle32.v v0, (%0)\n fence.i\n add.uw a0, a1, a2",
        "cvt.s.w $f0, $f1\n mov.d $f2, $f4",  # MIPS
        "ld1 {v0.4s}, [%0]\n b.eq 1f\n fmla v0.4s, v1.4s, v2.4s",  # Arm
        "rdtsc",
        "lock; cmpxchgq %2, %1",  # x86
        "pause",
    ],
)
def test_other_assembly_is_not_ptx(template):
    assert ptx_evidence(template) is None


def test_a_ptx_string_split_across_preprocessor_branches():
    code = (
        "__device__ void f() {\n"
        "  asm volatile(\n"
        "#ifdef USE_ROCM\n"
        '      "s_nop 0"\n'
        "#else\n"
        '      "membar.gl;"\n'
        "#endif\n"
        '      ::: "memory");\n'
        "}\n"
    )
    assert _lines(code, "ROCM004") == []
    assert _lines(code.replace("#ifdef USE_ROCM", "#ifdef FAST_PATH"), "ROCM004") == [2]


def test_asm_in_a_define_is_reported_once_at_the_define():
    code = '#define FENCE() \\\n  asm volatile("fence.acq_rel.gpu;" ::: "memory"); \\\n  asm volatile("membar.gl;")\n'
    assert _lines(code, "ROCM004") == [1]


@pytest.mark.parametrize(
    "code, lines",
    [
        ("__shared__ float a[16384];\n__shared__ float b[16385];\n", [2]),
        ("#define BM 128\n#define BK 64\n__shared__ half s[3][BM * BK * 2];\n", [3]),
        ("constexpr int kRows = 256;\n__shared__ float4 t[kRows][17];\n", [2]),
        ("cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024);\n", [1]),
        ("cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, sizeof(float) * 32768);\n", [1]),
        ("cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);\n", []),
        ("__shared__ float t[N][N];\n__shared__ float u[1 << 14];\n", []),
        ('const char* s = "__shared__ float t[65536];";\n// __shared__ float t[65536];\n', []),
    ],
)
def test_shared_memory_sizes_the_file_states(code, lines):
    assert _lines(code, "ROCM209") == lines


def test_lane_arrays_need_a_lane_index_in_the_dimension_of_32():
    code = (
        "__shared__ float per_warp[32];\n"
        "__shared__ float rows[32][64];\n"
        "__shared__ float cols[64][32];\n"
        "__device__ void f(int warp_id, int lane) {\n"
        "  per_warp[warp_id] = warpSize;\n"
        "  rows[warp_id][lane] = 0.f;\n"
        "  cols[warp_id][lane] = 0.f;\n"
        "}\n"
    )
    assert _lines(code, "ROCM215") == [3]


def test_library_include_forms():
    code = "#include <cub/cub.cuh>\n#include <thrust/sort.h>\n#include <cusparseLt.h>\n#include <cudnn_frontend.h>\n"
    assert _lines(code, "ROCM213") == [1, 3]
    assert _lines(code, "ROCM214") == [4]


def test_the_lds_limit_follows_the_configured_gpus():
    from rocmlint.config import GpuTarget

    code = "__shared__ float tile[2][128][128];\n__shared__ float huge[2][160][160];\n"
    for archs, lines, words in (
        ((), [1, 2], "64 KiB of LDS (MI100"),
        (("gfx950",), [2], "at most 160 KiB of LDS (gfx950: 160 KiB)"),
        (("gfx950", "gfx942"), [1, 2], "at most 64 KiB of LDS (gfx950: 160 KiB, gfx942: 64 KiB)"),
    ):
        source = SourceFile("k.cu", code, "cpp", target=GpuTarget(None, archs))
        findings, _ = check_source(source, select_checks(["ROCM209"], preview=True))
        assert [f.line for f in findings] == lines and words in findings[0].message


def test_the_wavefront_context_follows_calls_and_ignores_code_hip_never_compiles():
    code = (
        "__device__ float half_sum(float v) {\n"  # 1
        "  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor(v, o);\n"  # 2
        "  return v;\n"
        "}\n"
        "__global__ void consistent(float* out, float v) {\n"  # 5
        "  out[threadIdx.x >> 5] = half_sum(v);\n"
        "}\n"
        "__global__ void mixed(float* out, float v) {\n"  # 8
        "  out[threadIdx.x / warpSize] = half_sum(v);\n"
        "}\n"
    )
    # The helper meets the whole wavefront through `mixed`, which calls it.
    assert _lines(code, "ROCM203") == [2]
    assert _lines(code.replace("  out[threadIdx.x / warpSize] = half_sum(v);\n", "  out[threadIdx.x >> 5] = half_sum(v);\n"), "ROCM203") == []
    # warpSize on the NVIDIA side of a stack test is no whole-wavefront code on AMD.
    guarded = code.replace(
        "  out[threadIdx.x / warpSize] = half_sum(v);\n",
        "#ifndef USE_ROCM\n  out[threadIdx.x / warpSize] = half_sum(v);\n#endif\n",
    )
    assert _lines(guarded, "ROCM203") == []


def test_files_written_for_amd_keep_their_own_lane_counts():
    code = (
        "__device__ int half(int lane_idx) { return (lane_idx / 32) + warpSize; }\n"
        "__device__ int r(int x) { return __builtin_amdgcn_readfirstlane(x); }\n"
    )
    source = SourceFile("k.hip", code, "cpp")
    findings, _ = check_source(source, select_checks(["ROCM202"], preview=True), keep_gated=True)
    assert [f.gate for f in findings] == [
        "the file is written for AMD GPUs: it uses `__builtin_amdgcn_readfirstlane` (line 2) outside any GPU stack test"
    ]
    # The same builtin on the AMD side of a stack test does not make the file AMD's.
    dual = code.replace("__device__ int r", "#ifdef USE_ROCM\n__device__ int r") + "#endif\n"
    assert _lines(dual, "ROCM202") == [1]


def test_text_checks_skip_comments_and_strings_in_c_and_cpp():
    code = (
        "/* cudaMallocManaged(&p, n);\n"
        "   __launch_bounds__(256, 2) */\n"
        'const char* doc = "cudaMallocManaged(&p, n) __launch_bounds__(256, 2)";\n'
        'cuModuleLoad(&m, "k.ptx");  /* loads "other.cubin" */\n'
    )
    assert _lines(code, "ROCM212") == []
    assert _lines(code, "ROCM207") == []
    assert _lines(code, "ROCM208") == [4]
