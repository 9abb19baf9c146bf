"""Python code already gated for ROCm or NVIDIA is not flagged (rocmlint.gates)."""

import textwrap

import pytest

from rocmlint.checks_loader import check_by_id
from rocmlint.engine import check_source
from rocmlint.gates import names_platform
from rocmlint.source import SourceFile

COMPILE = 'torch.compile(m, mode="reduce-overhead")'


def _flagged(code: str, check_id: str = "ROCM002") -> list[int]:
    source = SourceFile("t.py", textwrap.dedent(code), "python")
    findings, problems = check_source(source, [check_by_id(check_id)])
    assert problems == []
    return [f.line for f in findings]


@pytest.mark.parametrize(
    "test",
    [
        "torch.version.hip",
        "torch.version.hip is not None",
        "not torch.version.cuda",
        "is_rocm()",
        "IS_ROCM",
        "IS_HIP and x > 1",
        "current_platform.is_rocm()",
        "platform.is_cuda()",
        "is_hip()",
        "self.use_rocm",
        "isRocm",
        "backend == 'hip'",
        "device_vendor() == 'nvidia'",
        "HAS_AMD_GPU",
    ],
)
def test_platform_tests_gate_both_sides(test):
    code = f"""
    import torch
    if {test}:
        a = {COMPILE}
    else:
        b = {COMPILE}
    """
    assert _flagged(code) == []


@pytest.mark.parametrize(
    "test",
    ["torch.cuda.is_available()", "x.is_cuda", "sys.platform == 'linux'", "shipping", "chip_count > 0", "relationship"],
)
def test_other_tests_are_not_gates(test):
    code = f"""
    import torch
    if {test}:
        a = {COMPILE}
    """
    assert _flagged(code) == [4]


def test_elif_and_nested_branches():
    code = f"""
    import torch
    if debug:
        pass
    elif torch.version.hip:
        if fast:
            a = {COMPILE}
    else:
        b = {COMPILE}
    c = {COMPILE}
    """
    assert _flagged(code) == [10]


def test_conditional_expression_and_boolean_short_circuit():
    code = f"""
    import torch
    a = {COMPILE} if not torch.version.hip else torch.compile(m)
    b = torch.version.hip or {COMPILE}
    c = {COMPILE} if fast else m
    """
    assert _flagged(code) == [5]


def test_early_exit_gates_the_rest_of_the_block():
    code = f"""
    import torch
    def build(m):
        if torch.version.hip:
            return torch.compile(m)
        return {COMPILE}

    def other(m):
        return {COMPILE}
    """
    assert _flagged(code) == [9]


def test_the_test_itself_is_not_inside_its_gate():
    code = f"""
    import torch
    if {COMPILE} and is_rocm():
        pass
    """
    assert _flagged(code) == [3]


def test_try_except_gates_imports_but_not_calls():
    code = f"""
    import torch
    try:
        import pynvml
        m = {COMPILE}
    except Exception:
        pass
    """
    assert _flagged(code, "ROCM001") == []
    assert _flagged(code, "ROCM002") == [5]


def test_type_checking_imports_are_gated():
    code = """
    from typing import TYPE_CHECKING
    if TYPE_CHECKING:
        import pynvml
    """
    assert _flagged(code, "ROCM001") == []


def test_try_finally_without_except_is_no_guard():
    code = """
    try:
        import pynvml
    finally:
        pass
    """
    assert _flagged(code, "ROCM001") == [3]


@pytest.mark.parametrize("name", ["is_rocm", "IS_HIP", "__HIPCC__", "USE_ROCM", "isHip", "TORCH_HIP_VERSION", "on_amd_gpu", "__gfx90a__"])
def test_names_platform(name):
    assert names_platform(name)


@pytest.mark.parametrize("name", ["ship", "chip", "whip_count", "is_cuda", "cuda_available", "hipster"])
def test_names_not_platform(name):
    assert not names_platform(name)
