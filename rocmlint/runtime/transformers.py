"""Hugging Face transformers: the three-tier attention as an attention
implementation, in one line and without editing site-packages::

    import rocmlint.runtime.transformers as rocm_hf
    rocm_hf.register()                                    # name "rocm"
    model = AutoModelForCausalLM.from_pretrained(path, attn_implementation="rocm")

``register`` adds ``attention_forward`` to transformers' ``AttentionInterface``
(and, from transformers 4.53 on, the SDPA mask builder to its
``AttentionMaskInterface`` under the same name, so that the model builds the
same masks as for ``attn_implementation="sdpa"``).  Off ROCm the result is the
model's own SDPA computation: the same ``scaled_dot_product_attention`` call
on the same arguments.

Supported: transformers 4.51 (the first release that exports
``AttentionInterface``) to 5.x.  This module imports transformers only when
``register`` runs.
"""

from __future__ import annotations

from typing import Any

import torch

from .attn import attention

__all__ = ["register", "attention_forward", "MIN_TRANSFORMERS"]

#: The first transformers release that exports ``AttentionInterface``.
MIN_TRANSFORMERS = (4, 51)

# Keyword arguments whose meaning this function cannot reproduce; calls that
# carry one go to transformers' own SDPA function (position_bias: T5-style
# learned biases; cache: the paged cache of continuous batching; s_aux/sinks:
# per-head attention sinks).
_SDPA_ONLY = ("position_bias", "cache", "s_aux", "sinks")


def _sdpa_fallback() -> Any:
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    return sdpa_attention_forward


def attention_forward(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    is_causal: bool | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """transformers' attention-function convention: ``query`` ``[B, H, S_q,
    D]``, ``key``/``value`` ``[B, H_kv, S_k, D]`` (not repeated), a mask built
    by the model (boolean, additive or None); returns ``([B, S_q, H, D],
    None)``.

    K/V reach ``rocmlint.runtime.attention`` with their own head count;
    ``dropout``, ``scaling``, ``softcap`` and ``sliding_window`` are passed on;
    the causal flag and mask slicing follow transformers' SDPA function, so
    that off ROCm the SDPA call is the one ``attn_implementation="sdpa"``
    makes.  Arguments the op cannot express go to that SDPA function.
    """
    if any(kwargs.get(name) is not None for name in _SDPA_ONLY):
        return _sdpa_fallback()(module, query, key, value, attention_mask, dropout=dropout,
                                scaling=scaling, is_causal=is_causal, **kwargs)
    mask = attention_mask
    if mask is not None and mask.dim() == 4:
        mask = mask[:, :, :, : key.shape[-2]]
    q_len = query.shape[2]
    causal = is_causal if is_causal is not None else getattr(module, "is_causal", True)
    # transformers' rule: SDPA's own (top-left) causal flag only for a square
    # prefill without mask; otherwise the mask says everything.
    causal = bool(q_len > 1 and mask is None and causal)
    if causal and key.shape[2] > q_len:
        # Keys after the last query are masked for every row under a top-left
        # mask; transformers drops them too (prefill into a static cache).
        key = key[:, :, :q_len]
        value = value[:, :, :q_len]
    window = None
    sliding_window = kwargs.get("sliding_window")
    if mask is None and sliding_window is not None and key.shape[2] > int(sliding_window):
        # The model sees the last `sliding_window` keys, itself included.
        window = (int(sliding_window) - 1, -1)
    softcap = kwargs.get("softcap")
    out = attention(query, key, value, attn_mask=mask, dropout_p=float(dropout),
                    is_causal=causal, scale=scaling, window_size=window,
                    softcap=softcap if softcap else None, layout="bhsd")
    return out.transpose(1, 2).contiguous(), None


def register(name: str = "rocm") -> str:
    """Register ``attention_forward`` (and the SDPA masks) under ``name`` in
    transformers' interfaces; returns ``name`` for ``attn_implementation=``.

    Raises ImportError when transformers is not installed and RuntimeError
    naming the installed version when it has no ``AttentionInterface``
    (before 4.51).
    """
    if not isinstance(name, str) or not name or name in ("sdpa", "eager") \
            or name.startswith("flash_attention"):
        raise ValueError(f"register: name must be a new implementation name, not {name!r}")
    try:
        import transformers
    except ImportError as exc:
        raise ImportError(
            "rocmlint.runtime.transformers needs Hugging Face transformers "
            f"(>= {MIN_TRANSFORMERS[0]}.{MIN_TRANSFORMERS[1]}): pip install transformers"
        ) from exc
    version = getattr(transformers, "__version__", "unknown")
    interface = getattr(transformers, "AttentionInterface", None)
    if interface is None:
        raise RuntimeError(
            f"rocmlint.runtime.transformers.register: transformers {version} has no "
            "AttentionInterface; it needs transformers >= "
            f"{MIN_TRANSFORMERS[0]}.{MIN_TRANSFORMERS[1]}"
        )
    interface.register(name, attention_forward)
    try:
        from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface
    except ImportError:
        pass  # before 4.53 each model builds its masks itself
    else:
        AttentionMaskInterface.register(name, ALL_MASK_ATTENTION_FUNCTIONS["sdpa"])
    return name
