"""blank_cuda_syntax: CUDA-only syntax becomes spaces, nothing moves, comments and literals stay.

The ERROR-node numbers below were measured on tests/data/fused_norm.cu with ast-grep-py 0.51:
18 ERROR nodes and no launch read as a call before blanking, 0 and all 4 launches after.
"""

from pathlib import Path

import pytest
from ast_grep_py import SgRoot

from rocmlint.cpp.cuda_syntax import blank_comments_and_literals, blank_cuda_syntax, literal_spans

FIXTURE = Path(__file__).parent / "data" / "fused_norm.cu"
ERRORS_BEFORE = 18  # measured: the C++ grammar on the unmodified fixture
ERRORS_AFTER = 0  # measured: after blank_cuda_syntax
LAUNCHED_KERNELS = {
    "fused::fused_add_rms_norm_kernel<scalar_t, kBlock>",
    "fused::count_nonzero_kernel",
    "fused::topk_small_kernel<4>",
    "fused::topk_small_kernel<8>",
}


def _root(text: str):
    return SgRoot(text, "cpp").root()


def _errors(text: str) -> int:
    return len(_root(text).find_all(kind="ERROR"))


def _called_functions(text: str) -> set[str]:
    return {node.field("function").text().strip() for node in _root(text).find_all(kind="call_expression")}


def _assert_same_shape(original: str, blanked: str) -> None:
    assert len(blanked) == len(original)
    assert [i for i, ch in enumerate(blanked) if ch == "\n"] == [i for i, ch in enumerate(original) if ch == "\n"]
    for a, b in zip(original, blanked):
        assert a == b or b == " ", (a, b)


@pytest.fixture(scope="module")
def fixture_text() -> str:
    return FIXTURE.read_text(encoding="utf-8")


# --- the fixture --------------------------------------------------------------------------


def test_fixture_keeps_length_newlines_and_every_position(fixture_text):
    _assert_same_shape(fixture_text, blank_cuda_syntax(fixture_text))


def test_fixture_comments_and_literals_are_untouched(fixture_text):
    blanked = blank_cuda_syntax(fixture_text)
    spans = literal_spans(fixture_text)
    assert len(spans) >= 12
    for start, end in spans:
        assert blanked[start:end] == fixture_text[start:end]
    # The NVRTC source in a raw string keeps its __global__ and its <<<...>>>.
    assert 'extern "C" __global__ void scale' in blanked
    assert '"quoted" <<<text>>>' in blanked
    assert '"reduce<<<warp>>>"' in blanked


def test_fixture_error_nodes_drop(fixture_text):
    before = _errors(fixture_text)
    after = _errors(blank_cuda_syntax(fixture_text))
    assert before == ERRORS_BEFORE
    assert after <= ERRORS_AFTER
    assert after < before


def test_fixture_launches_become_calls(fixture_text):
    assert not LAUNCHED_KERNELS & _called_functions(fixture_text)
    assert LAUNCHED_KERNELS <= _called_functions(blank_cuda_syntax(fixture_text))


def test_fixture_keeps_every_function_definition(fixture_text):
    blanked = blank_cuda_syntax(fixture_text)
    names = {
        node.field("declarator").text().split("(")[0].strip()
        for node in _root(blanked).find_all(kind="function_definition")
    }
    assert {"warp_reduce_sum", "block_reduce_sum", "fused_add_rms_norm_kernel", "count_nonzero", "main"} <= names


# --- launches -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "code,kernel",
    [
        ("void f() { k<<<g, b>>>(x); }", "k"),
        ("void f() { k<<<g, b, 0, stream>>>(x, y); }", "k"),
        ("void f() { ns::k<float, 4><<<dim3(n / 256), 256>>>(x); }", "ns::k<float, 4>"),
        ("void f() { k<<<n >> 5, 32, sizeof(std::pair<int, std::vector<int>>)>>>(x); }", "k"),
        ("void f() { k<<<grid, /* block: */ block>>>(x); }", "k"),
        ("void f() {\n  k<<<\n      grid,\n      block>>>\n      (x);\n}", "k"),
    ],
)
def test_launch_becomes_a_call(code, kernel):
    blanked = blank_cuda_syntax(code)
    _assert_same_shape(code, blanked)
    assert kernel in _called_functions(blanked)
    assert _errors(blanked) == 0


def test_comment_inside_a_launch_configuration_is_kept():
    code = "void f() { k<<<grid, /* block: */ block>>>(x); }"
    assert "/* block: */" in blank_cuda_syntax(code)


@pytest.mark.parametrize(
    "code",
    [
        "template <class T> struct R { friend std::ostream& operator<<<>(std::ostream&, const R<T>&); };",
        "template <class T> struct R { friend std::ostream& operator<< <T>(std::ostream&, const R<T>&); };",
        "int x = a <<<; int y = b;",
        "void f() { k<<<g, b; }\nvoid g() { m<<<1, 1>>>(x); }",
    ],
)
def test_things_that_are_not_launches_are_not_blanked_as_launches(code):
    blanked = blank_cuda_syntax(code)
    _assert_same_shape(code, blanked)
    # No launch may swallow the code after it: every identifier outside `<...>` survives.
    for word in ("std::ostream", "int y = b", "void g()"):
        if word in code:
            assert word in blanked


def test_friend_operator_specialisation_parses():
    code = "template <class T> struct R {\n  friend std::ostream& operator<<<>(std::ostream& os, const R<T>& r);\n};\n"
    assert _errors(code) > 0
    blanked = blank_cuda_syntax(code)
    assert "operator<<  (std::ostream& os" in blanked
    assert _errors(blanked) == 0


def test_a_later_launch_survives_a_broken_one():
    code = "void f() { k<<<g, b; }\nvoid g() { m<<<1, 1>>>(x); }"
    assert "m" in _called_functions(blank_cuda_syntax(code))


# --- qualifiers ---------------------------------------------------------------------------


def test_qualifiers_and_their_arguments_are_blanked():
    code = (
        "template <int N>\n"
        "__global__ void __launch_bounds__(N * (N > 64 ? 1 : 2), 2) k(float* __restrict__ x) {\n"
        "  __shared__ __align__(16) float s[N];\n"
        "}\n"
        "__device__ __forceinline__ float f(float v) { return v; }\n"
        "__host__ __device__ __noinline__ int g();\n"
        "__constant__ float c[4];\n"
        "__managed__ int m;\n"
    )
    blanked = blank_cuda_syntax(code)
    _assert_same_shape(code, blanked)
    for token in ("__global__", "__launch_bounds__", "__shared__", "__align__", "__device__", "__noinline__", "N > 64"):
        assert token not in blanked
    assert "__restrict__" not in blanked
    assert "k(float*" in blanked
    assert _errors(code) > 0
    assert _errors(blanked) == 0


def test_qualifier_inside_a_longer_identifier_is_kept():
    code = "int my__device__count = 0; int __device__x = 1;"
    assert blank_cuda_syntax(code) == code


def test_text_without_cuda_syntax_is_returned_as_is():
    code = "int main() { return 0; }\n"
    assert blank_cuda_syntax(code) is code


# --- comments and literals ----------------------------------------------------------------


@pytest.mark.parametrize(
    "code",
    [
        '// __global__ k<<<1, 1>>>(x)\nint a;',
        "/* __device__\n   k<<<1, 1>>>(x) */ int a;",
        'const char* s = "__shared__ <<<g, b>>>(x)";',
        'const char* s = "escaped \\" __device__ quote";',
        "const char* s = R\"(raw \" __global__ <<<g, b>>>(x) // not a comment)\";",
        'const char* s = u8R"cu(\n__global__ void k() {}\n)" still raw\n)cu";',
        "char c = '\"'; const char* s = \"__device__\";",
        "// a spliced comment \\\n   __device__ still comment\nint a;",
    ],
)
def test_comments_and_literals_are_never_rewritten(code):
    blanked = blank_cuda_syntax(code)
    assert blanked == code


def test_digit_separators_are_not_character_literals():
    code = "constexpr long n = 1'000; __device__ int x = 1'0'0;\n__shared__ float s[2];"
    blanked = blank_cuda_syntax(code)
    _assert_same_shape(code, blanked)
    assert "__device__" not in blanked
    assert "__shared__" not in blanked
    assert literal_spans(code) == []


def test_unterminated_literal_ends_at_the_line_end():
    code = "#error don't do this\n__device__ int x;"
    spans = literal_spans(code)
    assert spans == [(10, 20)]
    assert "__device__" not in blank_cuda_syntax(code)


def test_blank_comments_and_literals():
    code = 'int a; // note\nconst char* s = "text"; /* block\n comment */ int b;'
    code_only = blank_comments_and_literals(code)
    _assert_same_shape(code, code_only)
    assert "note" not in code_only and "text" not in code_only and "block" not in code_only
    assert "int a;" in code_only and "int b;" in code_only
    with_strings = blank_comments_and_literals(code, strings=False)
    assert '"text"' in with_strings and "note" not in with_strings


def test_attribute_macros_are_blanked_so_the_declaration_after_them_parses():
    from ast_grep_py import SgRoot

    from rocmlint.cpp.cuda_syntax import blank_cuda_syntax

    code = (
        "#define CK_TILE_DEVICE inline __device__\n"
        "TORCH_API at::Tensor add(const at::Tensor& a);\n"
        "struct K {\n  CUTLASS_DEVICE\n  K(int p) : w(__shfl_sync(0xffffffff, p, 0)) {}\n  int w;\n};\n"
        "CK_TILE_DEVICE float f(float x) { return x; }\n"
        'const char* s = "TORCH_API";\nCUTLASS_CHECK(status);\n'
    )
    blanked = blank_cuda_syntax(code)
    assert len(blanked) == len(code) and blanked.count("\n") == code.count("\n")
    assert "TORCH_API at" not in blanked and "CUTLASS_DEVICE" not in blanked
    assert blanked.startswith("#define CK_TILE_DEVICE")  # the macro's own definition stays
    assert '"TORCH_API"' in blanked and "CUTLASS_CHECK(status)" in blanked  # strings and calls stay
    assert SgRoot(blanked, "cpp").root().find(kind="ERROR") is None


def test_unroll_pragma_macros_before_a_loop_are_blanked():
    text = (
        "__device__ float f(float v) {\n"
        "  CUTLASS_PRAGMA_UNROLL\n"
        "  for (int o = 16; o >= 1; o /= 2) { v += __shfl_xor_sync(0xffffffff, v, o); }\n"
        "  CUTE_NO_UNROLL\n"
        "  for (int i = 0; i < 4; ++i) { v += 1.f; }\n"
        "  return v;\n"
        "}\n"
    )
    blanked = blank_cuda_syntax(text)
    assert len(blanked) == len(text) and "PRAGMA" not in blanked and "UNROLL" not in blanked
    root = SgRoot(blanked, "cpp").root()
    assert len(root.find_all(kind="for_statement")) == 2
    assert root.find_all(kind="ERROR") == []
