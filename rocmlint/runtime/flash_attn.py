"""A drop-in for flash-attention's ``flash_attn_func``.

``from flash_attn import flash_attn_func`` becomes::

    from rocmlint.runtime.flash_attn import flash_attn_func

(or ``from rocmlint.runtime import flash_attn_func``), with the same
signature, layout and meaning as flash-attention 2's function.  It runs
``rocmlint.runtime.attention``: aiter on ROCm, PyTorch SDPA elsewhere.
"""

from __future__ import annotations

import torch

from .attn import attention

__all__ = ["flash_attn_func"]


def _alibi_bias(slopes: torch.Tensor, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """flash-attention's ALiBi: ``-slope * |i + S_k - S_q - j|`` added to the
    scores of query ``i`` and key ``j``; float32 ``[B or 1, H, S_q, S_k]``."""
    b, sq, h, _ = q.shape
    sk = k.shape[1]
    if not isinstance(slopes, torch.Tensor):
        raise TypeError(f"flash_attn_func: alibi_slopes must be a tensor, got "
                        f"{type(slopes).__name__}")
    if tuple(slopes.shape) not in ((h,), (b, h)):
        raise ValueError(f"flash_attn_func: alibi_slopes must have shape ({h},) or ({b}, {h}), "
                         f"got {tuple(slopes.shape)}")
    if slopes.device != q.device:
        raise ValueError(f"flash_attn_func: alibi_slopes is on {slopes.device} but q is on "
                         f"{q.device}")
    rows = torch.arange(sq, device=q.device, dtype=torch.float32).unsqueeze(1)
    cols = torch.arange(sk, device=q.device, dtype=torch.float32).unsqueeze(0)
    distance = (rows + (sk - sq) - cols).abs()  # [S_q, S_k]
    slopes = slopes.to(torch.float32).reshape(-1, h, 1, 1)
    return -slopes * distance


def flash_attn_func(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    dropout_p: float = 0.0,
    softmax_scale: float | None = None,
    causal: bool = False,
    window_size: tuple[int, int] = (-1, -1),
    softcap: float = 0.0,
    alibi_slopes: torch.Tensor | None = None,
    deterministic: bool = False,
    return_attn_probs: bool = False,
) -> torch.Tensor:
    """flash-attention 2's ``flash_attn_func`` on every platform.

    ``q`` is ``[B, S_q, H, D]``, ``k``/``v`` ``[B, S_k, H_kv, D]`` with ``H`` a
    multiple of ``H_kv`` (MQA/GQA as is); the result is ``[B, S_q, H, D_v]``.
    ``causal`` aligns the mask to the bottom-right corner, ``window_size``
    ``(left, right)`` limits each query to keys ``i + S_k - S_q - left`` ..
    ``i + S_k - S_q + right`` (-1: no limit), ``softcap`` > 0 applies
    ``softcap * tanh(scores / softcap)``, ``alibi_slopes`` (``(H,)`` or
    ``(B, H)``) adds ``-slope * |i + S_k - S_q - j|`` to the scores, and
    ``dropout_p`` is applied whenever it is > 0: pass 0.0 in evaluation.

    ``deterministic`` is accepted and changes nothing (the forward pass is
    deterministic, and the backward pass is PyTorch's).  ``return_attn_probs``
    (a testing aid in flash-attention, whose probabilities it documents as
    possibly wrongly scaled) is not supported and raises
    ``NotImplementedError``.

    ALiBi goes through SDPA as an additive float32 mask (no aiter tier), and
    softcap through the eager tier (SDPA cannot express it).
    """
    if return_attn_probs:
        raise NotImplementedError(
            "flash_attn_func(return_attn_probs=True) is not supported by "
            "rocmlint.runtime: flash-attention offers it for testing only"
        )
    if window_size is not None and tuple(window_size) == (-1, -1):
        window_size = None
    if window_size is not None:
        window_size = tuple(window_size)
    mask = None
    if alibi_slopes is not None:
        if not (isinstance(q, torch.Tensor) and isinstance(k, torch.Tensor)
                and q.dim() == 4 and k.dim() == 4):
            # Let attention() report the malformed q or k by name.
            return attention(q, k, v, dropout_p=dropout_p, causal=causal,
                             softmax_scale=softmax_scale, window_size=window_size,
                             softcap=softcap or None)
        mask = _alibi_bias(alibi_slopes, q, k)
    return attention(q, k, v, attn_mask=mask, dropout_p=dropout_p, causal=bool(causal),
                     softmax_scale=softmax_scale, window_size=window_size,
                     softcap=softcap or None)
