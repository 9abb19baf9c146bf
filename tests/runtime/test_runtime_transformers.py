"""rocmlint.runtime.transformers: the attention registered in Hugging Face
transformers, tested with tiny randomly initialised models built from configs
(no weights downloaded).  Off ROCm the logits equal attn_implementation="sdpa"
bit for bit and greedy generation with a KV cache gives the same tokens."""

from __future__ import annotations

import sys
import types

import pytest
import torch
import torch.nn.functional as F

transformers = pytest.importorskip("transformers")

import rocmlint.runtime.transformers as rocm_hf  # noqa: E402
from rocmlint.runtime import attn  # noqa: E402

from .helpers import reference_attention  # noqa: E402

SMALL = dict(vocab_size=96, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
             num_attention_heads=4, max_position_embeddings=128)


def _configs():
    cfg = {
        "llama (GQA 4:2)": transformers.LlamaConfig(**SMALL, num_key_value_heads=2),
        "qwen2 (MQA)": transformers.Qwen2Config(**SMALL, num_key_value_heads=1),
        "qwen3 (GQA, q/k norm)": transformers.Qwen3Config(**SMALL, num_key_value_heads=2,
                                                          head_dim=16),
        "gemma (GELU-tanh MLP)": transformers.GemmaConfig(
            **SMALL, num_key_value_heads=1, head_dim=16, hidden_activation="gelu_pytorch_tanh"),
        "mistral (sliding window 8)": transformers.MistralConfig(
            **SMALL, num_key_value_heads=2, sliding_window=8),
    }
    return cfg


CONFIGS = _configs()


@pytest.fixture(scope="module")
def name():
    return rocm_hf.register("rocm")


@pytest.fixture
def spy(monkeypatch):
    """Count calls of the registered function and of attention() inside it,
    recording the K/V head counts that reach attention()."""
    record = {"forward": 0, "kv_heads": set()}
    real_forward = rocm_hf.attention_forward
    real_attention = rocm_hf.attention

    def forward(*args, **kwargs):
        record["forward"] += 1
        return real_forward(*args, **kwargs)

    def attention(q, k, v, **kwargs):
        record["kv_heads"].add(k.shape[1])
        return real_attention(q, k, v, **kwargs)

    monkeypatch.setattr(rocm_hf, "attention", attention)
    transformers.AttentionInterface.register("rocm_spy", forward)
    try:
        from transformers.masking_utils import (ALL_MASK_ATTENTION_FUNCTIONS,
                                                AttentionMaskInterface)
    except ImportError:
        pass
    else:
        AttentionMaskInterface.register("rocm_spy", ALL_MASK_ATTENTION_FUNCTIONS["sdpa"])
    return record


def _pair(config, implementation):
    torch.manual_seed(0)
    reference = transformers.AutoModelForCausalLM.from_config(
        config, attn_implementation="sdpa").eval()
    model = transformers.AutoModelForCausalLM.from_config(
        config, attn_implementation=implementation).eval()
    model.load_state_dict(reference.state_dict())
    return reference, model


def test_register_returns_the_name(name):
    assert name == "rocm"
    assert "rocm" in transformers.AttentionInterface()
    with pytest.raises(ValueError):
        rocm_hf.register("sdpa")


@pytest.fixture(params=["CPU routing", "CUDA routing"])
def routing(request, monkeypatch):
    """Also run the regrouping that masked GQA gets on CUDA (packed query
    heads for decode, repeated K/V for prefill) on these CPU tensors."""
    if request.param == "CUDA routing":
        monkeypatch.setattr(attn, "GQA_MASK_REGROUP_DEVICES", frozenset({"cpu", "cuda"}))
    return request.param


@pytest.mark.parametrize("label", list(CONFIGS))
def test_logits_and_generation_equal_sdpa(name, spy, routing, label):
    config = CONFIGS[label]
    reference, model = _pair(config, "rocm_spy")
    ids = torch.randint(0, config.vocab_size, (2, 20), generator=torch.Generator().manual_seed(1))
    padded = torch.ones_like(ids)
    padded[1, :6] = 0  # left padding in the second row
    with torch.no_grad():
        assert torch.equal(model(ids).logits, reference(ids).logits)
        assert torch.equal(model(ids, attention_mask=padded).logits,
                           reference(ids, attention_mask=padded).logits)
        generated = model.generate(ids, attention_mask=padded, max_new_tokens=10,
                                   do_sample=False, pad_token_id=0)
        expected = reference.generate(ids, attention_mask=padded, max_new_tokens=10,
                                      do_sample=False, pad_token_id=0)
    assert torch.equal(generated, expected)
    assert spy["forward"] > 0
    # GQA without repeat_kv: K/V reach attention() with their own head count.
    assert spy["kv_heads"] == {config.num_key_value_heads}


def test_from_pretrained_local(name, tmp_path):
    config = CONFIGS["llama (GQA 4:2)"]
    torch.manual_seed(0)
    transformers.AutoModelForCausalLM.from_config(config).save_pretrained(tmp_path)
    sdpa = transformers.AutoModelForCausalLM.from_pretrained(
        tmp_path, attn_implementation="sdpa").eval()
    rocm = transformers.AutoModelForCausalLM.from_pretrained(
        tmp_path, attn_implementation="rocm").eval()
    assert rocm.config._attn_implementation == "rocm"
    ids = torch.randint(0, config.vocab_size, (1, 12), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        assert torch.equal(rocm(ids).logits, sdpa(ids).logits)


# --- the calling convention, called directly ---------------------------------------

class _Module(torch.nn.Module):
    is_causal = True


def _qkv(sq=5, sk=5, h=4, hk=2, d=16):
    g = torch.Generator().manual_seed(3)
    return (torch.randn(2, h, sq, d, generator=g), torch.randn(2, hk, sk, d, generator=g),
            torch.randn(2, hk, sk, d, generator=g))


def test_dropout_and_scaling_reach_sdpa():
    q, k, v = _qkv()
    torch.manual_seed(9)
    out, weights = rocm_hf.attention_forward(_Module(), q, k, v, None, dropout=0.3, scaling=0.2)
    torch.manual_seed(9)
    expected = F.scaled_dot_product_attention(q, k, v, dropout_p=0.3, scale=0.2, is_causal=True,
                                              enable_gqa=True).transpose(1, 2)
    assert weights is None and torch.equal(out, expected) and out.is_contiguous()


def test_softcap_is_applied(monkeypatch):
    q, k, v = _qkv()
    calls = []
    real = attn._run_eager
    monkeypatch.setattr(attn, "_run_eager", lambda *a: calls.append(1) or real(*a))
    out, _ = rocm_hf.attention_forward(_Module(), q * 5, k, v, None, scaling=0.25, softcap=3.0)
    assert calls == [1]
    ref = reference_attention((q * 5).transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                              is_causal=True, scale=0.25, softcap=3.0)
    torch.testing.assert_close(out.double(), ref, rtol=1e-5, atol=1e-5)


def test_sliding_window_without_a_mask():
    q, k, v = _qkv(sq=1, sk=12)
    out, _ = rocm_hf.attention_forward(_Module(), q, k, v, None, sliding_window=4)
    ref = reference_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                              window=(3, -1))
    torch.testing.assert_close(out.double(), ref, rtol=1e-5, atol=1e-5)


def test_mask_is_cut_to_the_keys():
    q, k, v = _qkv(sq=3, sk=6)
    mask = torch.ones(2, 1, 3, 10, dtype=torch.bool)  # longer than the keys, as in static caches
    mask[:, :, :, 4:] = False
    out, _ = rocm_hf.attention_forward(_Module(), q, k, v, mask)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask[..., :6], enable_gqa=True)
    assert torch.equal(out, expected.transpose(1, 2))


def test_what_the_op_cannot_express_goes_to_transformers_sdpa(monkeypatch):
    calls = []

    def fake_sdpa(module, query, key, value, attention_mask, **kwargs):
        calls.append(sorted(kwargs))
        return query.transpose(1, 2), None

    monkeypatch.setattr(rocm_hf, "_sdpa_fallback", lambda: fake_sdpa)
    q, k, v = _qkv()
    rocm_hf.attention_forward(_Module(), q, k, v, None, s_aux=torch.zeros(4))
    rocm_hf.attention_forward(_Module(), q, k, v, None, position_bias=torch.zeros(1, 4, 5, 5))
    assert len(calls) == 2 and "s_aux" in calls[0] and "position_bias" in calls[1]


# --- versions -------------------------------------------------------------------------

def test_missing_interface_names_the_version(monkeypatch):
    old = types.ModuleType("transformers")
    old.__version__ = "4.50.3"
    monkeypatch.setitem(sys.modules, "transformers", old)
    with pytest.raises(RuntimeError, match=r"transformers 4\.50\.3 has no AttentionInterface.*"
                                           r">= 4\.51"):
        rocm_hf.register()


def test_missing_transformers(monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(ImportError, match="pip install transformers"):
        rocm_hf.register()


def test_installed_version_is_supported():
    major, minor = (int(x) for x in transformers.__version__.split(".")[:2])
    assert (major, minor) >= rocm_hf.MIN_TRANSFORMERS
