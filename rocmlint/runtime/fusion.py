"""Projection fusion: one GEMM for gate+up or q+k+v instead of two or three.

A fused projection reads the activations once and launches one GEMM.  The
fused weight is the row-wise concatenation of the original weights, so each
output slice computes the same dot products as the original layer; whether
the last bit matches depends on the GEMM library choosing the same reduction
order for the wider matrix (measured on an H100 in docs/runtime.md).
"""

from __future__ import annotations

import torch
from torch import nn

from .ops import gelu_tanh_and_mul, linear, silu_and_mul

__all__ = ["FusedLinear", "fuse_linears", "fuse_gate_up", "fuse_qkv"]

_ACTIVATIONS = {"silu": silu_and_mul, "gelu_tanh": gelu_tanh_and_mul}


class FusedLinear(nn.Module):
    """Several ``nn.Linear`` layers over the same input, computed by one GEMM.

    ``forward(x)`` returns a tuple with one tensor per original layer (views of
    the fused output).  ``fused(x)`` returns the un-split ``[..., sum(out)]``
    output, the input ``silu_and_mul`` expects for a gate+up pair.  With
    ``activation`` set (gate+up only), ``forward`` returns the activated
    product instead of a tuple.
    """

    def __init__(
        self,
        weight: torch.Tensor,
        bias: torch.Tensor | None,
        split_sizes: tuple[int, ...],
        activation: str | None = None,
    ) -> None:
        super().__init__()
        if activation is not None and (activation not in _ACTIVATIONS or len(split_sizes) != 2
                                       or split_sizes[0] != split_sizes[1]):
            raise ValueError(
                "activation needs a gate+up pair of equal width and one of "
                f"{sorted(_ACTIVATIONS)}"
            )
        self.weight = nn.Parameter(weight, requires_grad=weight.requires_grad)
        self.bias = None if bias is None else nn.Parameter(bias, requires_grad=bias.requires_grad)
        self.split_sizes = tuple(int(s) for s in split_sizes)
        self.activation = activation
        self.in_features = int(weight.shape[1])
        self.out_features = int(weight.shape[0])

    def fused(self, x: torch.Tensor) -> torch.Tensor:
        return linear(x, self.weight, self.bias)

    def forward(self, x: torch.Tensor):
        y = linear(x, self.weight, self.bias)
        if self.activation is not None:
            return _ACTIVATIONS[self.activation](y)
        return tuple(y.split(self.split_sizes, dim=-1))

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, split_sizes={self.split_sizes}, "
                f"bias={self.bias is not None}, activation={self.activation}")


def fuse_linears(*layers: nn.Linear, activation: str | None = None) -> FusedLinear:
    """Concatenate the weights (and biases) of layers that read the same input.

    All layers must share ``in_features``, dtype and device, and either all
    have a bias or none (a zero bias would change the GEMM path).  The new
    parameters are copies: drop the original layers afterwards to free them.
    """
    if len(layers) < 2:
        raise ValueError("fuse_linears needs at least two layers")
    first = layers[0]
    for layer in layers:
        w = layer.weight
        if w.shape[1] != first.weight.shape[1]:
            raise ValueError("fuse_linears: layers read inputs of different widths")
        if w.dtype != first.weight.dtype or w.device != first.weight.device:
            raise ValueError("fuse_linears: layers differ in dtype or device")
    has_bias = [layer.bias is not None for layer in layers]
    if any(has_bias) and not all(has_bias):
        raise ValueError("fuse_linears: either every layer has a bias or none has")
    requires_grad = any(layer.weight.requires_grad for layer in layers)
    with torch.no_grad():
        weight = torch.cat([layer.weight.detach() for layer in layers], dim=0)
        bias = (torch.cat([layer.bias.detach() for layer in layers], dim=0)
                if all(has_bias) else None)
    weight.requires_grad_(requires_grad)
    if bias is not None:
        bias.requires_grad_(requires_grad)
    sizes = tuple(int(layer.weight.shape[0]) for layer in layers)
    return FusedLinear(weight, bias, sizes, activation=activation)


def fuse_gate_up(gate: nn.Linear, up: nn.Linear, *, activation: str | None = None) -> FusedLinear:
    """Fuse an MLP's gate and up projections (gate first).

    ``activation=None``: ``forward`` returns ``(gate(x), up(x))``.
    ``activation="silu"`` / ``"gelu_tanh"``: ``forward`` returns
    ``silu_and_mul`` / ``gelu_tanh_and_mul`` of the fused output, i.e.
    ``act(gate(x)) * up(x)``.
    """
    return fuse_linears(gate, up, activation=activation)


def fuse_qkv(q_proj: nn.Linear, k_proj: nn.Linear, v_proj: nn.Linear) -> FusedLinear:
    """Fuse attention input projections; ``forward`` returns ``(q, k, v)``.
    K/V may have fewer output features than Q (GQA)."""
    return fuse_linears(q_proj, k_proj, v_proj)
