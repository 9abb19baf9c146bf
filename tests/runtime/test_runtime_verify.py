"""verify(): a port checked forward and backward against the CPU or float64."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from rocmlint.runtime import attention, verify
from rocmlint.runtime.verification import TOLERANCES, VerificationError, VerifyResult


def _mlp(dtype=torch.float32):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 8)).to(dtype)


def test_a_faithful_module_passes_and_names_every_output_and_gradient():
    model = _mlp()
    x = torch.randn(4, 16)
    result = verify(model, x, reference="float64")
    assert isinstance(result, VerifyResult) and result.passed, str(result)
    names = [c.name for c in result.comparisons]
    assert names == ["output", "grad input[0]", "grad 0.weight", "grad 0.bias",
                     "grad 2.weight", "grad 2.bias"]
    assert all(c.rtol == c.atol == 1e-4 for c in result.comparisons)
    out = result.comparisons[0]
    assert 0 < out.max_abs < 1e-5 and out.kind == "output" and out.shape == (4, 8)
    assert "passed" in str(result) and "grad 2.bias" in str(result)


def test_the_model_is_left_as_it_was():
    model = _mlp()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    verify(model, torch.randn(4, 16))
    assert all(p.grad is None for p in model.parameters())
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())


def test_bf16_uses_the_guides_tolerance_and_float64_sees_the_rounding():
    model = _mlp(torch.bfloat16)
    x = torch.randn(8, 16).bfloat16()
    same = verify(model, x, reference="cpu")
    assert same.passed and all(c.max_abs == 0 for c in same.comparisons)
    exact = verify(model, x, reference="float64")
    assert exact.passed, str(exact)
    assert all((c.rtol, c.atol) == TOLERANCES[torch.bfloat16] == (5e-2, 5e-2)
               for c in exact.comparisons)
    assert max(c.max_abs for c in exact.comparisons) > 0


class _Wrong(nn.Module):
    """Computes the right thing in float64 and a wrong one otherwise, as a
    port with a bug on one path would."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        y = self.lin(x)
        return y if x.dtype == torch.float64 else y * 1.1


def test_a_wrong_port_fails_and_raises_only_when_asked():
    model = _Wrong()
    x = torch.randn(3, 8)
    result = verify(model, x, reference="float64")
    assert not result.passed
    failed = {c.name for c in result.failures}
    assert "output" in failed and "grad lin.weight" in failed
    assert "FAIL" in str(result)
    with pytest.raises(VerificationError) as info:
        verify(model, x, reference="float64", raise_on_failure=True)
    assert info.value.result.failures
    with pytest.raises(AssertionError):
        result.raise_if_failed()
    # Wide enough tolerances accept it.
    assert verify(model, x, reference="float64", rtol=0.5, atol=10.0).passed


def test_functions_tuples_and_dicts():
    q, k, v = (torch.randn(1, 6, 4, 8) for _ in range(3))

    def fn(q, k, v, causal):
        out = attention(q, k, v, causal=causal)
        return {"out": out, "pair": (out.sum(-1), torch.ones(2, dtype=torch.long))}

    result = verify(fn, (q, k, v, True), reference="float64")
    assert result.passed, str(result)
    names = [c.name for c in result.comparisons]
    assert names == ["output.out", "output.pair[0]", "grad input[0]", "grad input[1]",
                     "grad input[2]"]


def test_without_gradients():
    result = verify(_mlp(), torch.randn(2, 16), grads=False)
    assert [c.kind for c in result.comparisons] == ["output"]


def test_nan_agreement_and_disagreement():
    x = torch.tensor([1.0, float("nan"), 2.0])
    assert verify(lambda t: t * 2, x, grads=False).passed
    odd = verify(lambda t: t if t.dtype == torch.float64 else t.nan_to_num(0.0), x,
                 reference="float64", grads=False)
    assert not odd.passed


def test_bad_arguments():
    with pytest.raises(ValueError, match="reference"):
        verify(_mlp(), torch.randn(2, 16), reference="gpu")
    with pytest.raises(TypeError, match="Module or a function"):
        verify(42, torch.randn(2))
    with pytest.raises(TypeError, match="no floating-point tensor"):
        verify(lambda t: t.long(), torch.randn(2))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU: the CPU tests "
                    "above cover the comparison itself")
def test_on_the_gpu_against_the_cpu():
    model = _mlp(torch.bfloat16).cuda()
    result = verify(model, torch.randn(8, 16, device="cuda").bfloat16(), reference="float64")
    assert result.device.startswith("cuda") and result.passed, str(result)
