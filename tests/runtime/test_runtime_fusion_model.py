"""fuse_model: gate+up and q+k+v fused in whole models, outputs unchanged
within the dtype's rounding."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from rocmlint.runtime import fuse_model
from rocmlint.runtime.fusion import FusedGatedMLP, ProjectionSlice

transformers = pytest.importorskip("transformers")

SMALL = dict(vocab_size=96, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
             num_attention_heads=4, max_position_embeddings=128)
CONFIGS = {
    "llama (SiLU)": lambda: transformers.LlamaConfig(**SMALL, num_key_value_heads=2),
    "qwen3 (SiLU, q/k norm)": lambda: transformers.Qwen3Config(**SMALL, num_key_value_heads=2,
                                                               head_dim=16),
    "gemma (GELU-tanh)": lambda: transformers.GemmaConfig(
        **SMALL, num_key_value_heads=1, head_dim=16, hidden_activation="gelu_pytorch_tanh"),
}


@pytest.mark.parametrize("label", list(CONFIGS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_hf_models(label, dtype):
    torch.manual_seed(0)
    config = CONFIGS[label]()
    model = transformers.AutoModelForCausalLM.from_config(config).to(dtype).eval()
    ids = torch.randint(0, 96, (2, 16), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        before = model(ids).logits
        tokens = model.generate(ids[:1], max_new_tokens=8, do_sample=False, pad_token_id=0)
    report = fuse_model(model, force=True)
    assert report == {"mlp": 2, "qkv": 2, "skipped": []}
    layer = model.model.layers[0]
    assert isinstance(layer.mlp, FusedGatedMLP)
    assert isinstance(layer.self_attn.q_proj, ProjectionSlice)
    keys = set(model.state_dict())
    assert "model.layers.0.mlp.gate_up.weight" in keys
    assert "model.layers.0.self_attn.qkv_proj.weight" in keys
    assert not any(k.endswith(("q_proj.weight", "gate_proj.weight")) for k in keys)
    with torch.no_grad():
        after = model(ids).logits
        tokens_after = model.generate(ids[:1], max_new_tokens=8, do_sample=False, pad_token_id=0)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=5e-2, atol=5e-2)
    torch.testing.assert_close(after.float(), before.float(), **tol)
    if dtype == torch.float32:
        assert torch.equal(tokens_after, tokens)


class PlainMLP(nn.Module):
    """A gated MLP written as in most model code, outside transformers."""

    def __init__(self, act):
        super().__init__()
        self.gate_proj = nn.Linear(16, 32, bias=False)
        self.up_proj = nn.Linear(16, 32, bias=False)
        self.down_proj = nn.Linear(32, 16, bias=False)
        self.act_fn = act

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class OddMLP(PlainMLP):
    """Same attributes, another computation: must be left alone."""

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) + self.up_proj(x))


def test_plain_modules_and_what_is_left_alone():
    torch.manual_seed(0)
    model = nn.Sequential(PlainMLP(nn.SiLU()), PlainMLP(nn.ReLU()), OddMLP(nn.SiLU()),
                          PlainMLP(lambda t: F.gelu(t, approximate="tanh")))
    x = torch.randn(3, 16)
    with torch.no_grad():
        before = model(x)
    report = fuse_model(model, force=True)
    assert report["mlp"] == 2
    assert report["skipped"] == ["1 (gated MLP)", "2 (gated MLP)"]
    assert isinstance(model[0], FusedGatedMLP) and isinstance(model[3], FusedGatedMLP)
    assert isinstance(model[1], PlainMLP) and type(model[2]) is OddMLP
    with torch.no_grad():
        torch.testing.assert_close(model(x), before, rtol=1e-6, atol=1e-6)


class Attn(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(16, 16)
        self.k_proj = nn.Linear(16, 8)
        self.v_proj = nn.Linear(16, 8)

    def forward(self, x, kv=None):
        kv = x if kv is None else kv
        return self.q_proj(x), self.k_proj(kv), self.v_proj(kv)


def test_qkv_slices_in_any_calling_pattern():
    torch.manual_seed(0)
    module = Attn()
    x, other = torch.randn(2, 16), torch.randn(2, 16)
    with torch.no_grad():
        expected_self = module(x)
        expected_cross = module(x, other)
        expected_v_first = module.v_proj(x)
    assert fuse_model(module, force=True) == {"mlp": 0, "qkv": 1, "skipped": []}
    with torch.no_grad():
        for got, want in zip(module(x), expected_self):
            torch.testing.assert_close(got, want)
        for got, want in zip(module(x, other), expected_cross):     # k/v from another input
            torch.testing.assert_close(got, want)
        torch.testing.assert_close(module.v_proj(x), expected_v_first)  # out of order
    assert len(list(module.parameters())) == 2                      # the fused weight and bias


def test_fused_model_trains():
    torch.manual_seed(0)
    model = nn.Sequential(PlainMLP(nn.SiLU()), Attn())
    fuse_model(model, force=True)
    q, k, v = model(torch.randn(4, 16))
    (q.sum() + k.sum() + v.sum()).backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all()
               for p in model.parameters() if p.requires_grad)


def _llama(dtype=torch.bfloat16):
    torch.manual_seed(0)
    config = CONFIGS["llama (SiLU)"]()
    return transformers.AutoModelForCausalLM.from_config(config).to(dtype).eval()


def test_off_rocm_the_model_is_left_alone_unless_asked():
    model = _llama()
    modules = dict(model.named_modules())
    state = {k: v.clone() for k, v in model.state_dict().items()}
    assert fuse_model(model) == {"mlp": 0, "qkv": 0, "skipped": []}
    assert dict(model.named_modules()) == modules
    after = model.state_dict()
    assert after.keys() == state.keys()
    assert all(torch.equal(after[k], state[k]) for k in state)
    assert not any(isinstance(m, (FusedGatedMLP, ProjectionSlice)) for m in model.modules())


def test_on_rocm_it_fuses_by_default(fake_rocm):
    model = _llama()
    assert fuse_model(model) == {"mlp": 2, "qkv": 2, "skipped": []}
    assert isinstance(model.model.layers[0].mlp, FusedGatedMLP)
