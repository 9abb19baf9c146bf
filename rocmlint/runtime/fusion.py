"""Projection fusion: one GEMM for gate+up or q+k+v instead of two or three.

A fused projection reads the activations once and launches one GEMM.  The
fused weight is the row-wise concatenation of the original weights, so each
output slice computes the same dot products as the original layer; whether
the last bit matches depends on the GEMM library choosing the same reduction
order for the wider matrix (measured on an H100 in docs/runtime.md).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from . import device as _device
from .ops import gelu_tanh_and_mul, linear, silu_and_mul

__all__ = ["FusedLinear", "fuse_linears", "fuse_gate_up", "fuse_qkv", "fuse_model",
           "FusedGatedMLP", "ProjectionSlice"]

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


# --------------------------------------------------------------------------
# Whole-model fusion
# --------------------------------------------------------------------------


class FusedGatedMLP(nn.Module):
    """``down_proj(act(gate_proj(x)) * up_proj(x))`` with gate and up in one
    GEMM (``gate_up``, a ``FusedLinear`` with the activation) and the fused
    ``silu_and_mul`` / ``gelu_tanh_and_mul``.  ``down_proj`` is the original
    layer."""

    def __init__(self, gate_up: FusedLinear, down_proj: nn.Module) -> None:
        super().__init__()
        self.gate_up = gate_up
        self.down_proj = down_proj

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(self.gate_up(x))


class _QKVGroup:
    """The fused q+k+v projection shared by three ``ProjectionSlice`` modules.

    Attention modules call ``q_proj(x)``, ``k_proj(x)``, ``v_proj(x)`` in turn
    on the same ``x``: the first call runs the one GEMM and keeps the k and v
    slices for the next two calls on that same tensor.  Calls in any other
    pattern compute their own slice directly (same weights, same result up to
    the GEMM's reduction order).
    """

    def __init__(self, fused: FusedLinear) -> None:
        self.fused = fused
        self.pending_input: torch.Tensor | None = None
        self.pending: dict[int, torch.Tensor] = {}


class ProjectionSlice(nn.Module):
    """One of q/k/v after ``fuse_model``: a view onto the fused projection."""

    def __init__(self, group: _QKVGroup, index: int) -> None:
        super().__init__()
        # Kept outside the module tree: the weights belong to the attention
        # module's ``qkv_proj`` and must not appear three more times.
        object.__setattr__(self, "_group", group)
        self.index = index
        sizes = group.fused.split_sizes
        self.start = sum(sizes[:index])
        self.out_features = sizes[index]
        self.in_features = group.fused.in_features

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        group = self._group
        if self.index == 0:
            outs = group.fused(x)
            group.pending_input = x
            group.pending = {1: outs[1], 2: outs[2]}
            return outs[0]
        if group.pending_input is x and self.index in group.pending:
            out = group.pending.pop(self.index)
            if not group.pending:
                group.pending_input = None
            return out
        fused = group.fused
        stop = self.start + self.out_features
        bias = None if fused.bias is None else fused.bias[self.start:stop]
        return linear(x, fused.weight[self.start:stop], bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"slice={self.index} of the fused qkv_proj")


def _activation_name(act: object) -> str | None:
    """``"silu"`` or ``"gelu_tanh"`` when ``act`` computes exactly that."""
    if not callable(act):
        return None
    probe = torch.linspace(-6.0, 6.0, 97)
    try:
        with torch.no_grad():
            got = act(probe)
    except Exception:
        return None
    if not isinstance(got, torch.Tensor) or got.shape != probe.shape:
        return None
    if torch.equal(got, F.silu(probe)):
        return "silu"
    if torch.equal(got, F.gelu(probe, approximate="tanh")):
        return "gelu_tanh"
    return None


def _is_linear(module: object) -> bool:
    return isinstance(module, nn.Linear) and type(module).forward is nn.Linear.forward


def _same_result(before: nn.Module, after: nn.Module, in_features: int,
                 weight: torch.Tensor) -> bool:
    """Run both on one small probe input: a module whose forward is not the
    pattern assumed here is left alone."""
    gen = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(3, in_features, generator=gen).to(weight.device, weight.dtype)
    with torch.no_grad():
        a, b = before(x), after(x)
    if not isinstance(a, torch.Tensor) or a.shape != b.shape:
        return False
    tol = 1e-4 if weight.dtype in (torch.float32, torch.float64) else 3e-2
    return torch.allclose(a.float(), b.float(), rtol=tol, atol=tol * max(1.0, a.abs().max().item()))


def fuse_model(model: nn.Module, *, mlp: bool = True, qkv: bool = True,
               force: bool = False) -> dict[str, object]:
    """Fuse projections in place: gate+up into one GEMM with the fused
    activation, and q+k+v into one GEMM, wherever a model uses the Hugging Face
    layout (Llama, Qwen2/3, Mistral, Gemma and the like).

    On ROCm only, unless ``force=True``: off ROCm the model is left exactly as
    it is and the report counts nothing.  There the wider GEMM changed bf16
    results (logits by up to 0.34 on a Llama-shaped model, other greedy
    tokens) and gave no speed-up (measured on an H100, docs/runtime.md), so
    fusing on NVIDIA or CPU must be asked for.

    - Gated MLPs: modules with ``gate_proj``, ``up_proj``, ``down_proj``
      (``nn.Linear``) and an ``act_fn`` that computes SiLU or tanh-GELU exactly
      are replaced by ``FusedGatedMLP``.
    - Attention: ``q_proj``, ``k_proj``, ``v_proj`` (``nn.Linear`` over the
      same input) become ``ProjectionSlice`` views of one ``qkv_proj``
      (``FusedLinear``) added to the attention module; the attention code is
      unchanged.

    Each candidate is checked on a small probe input before it is replaced;
    one that does not compute the assumed pattern is left alone and named in
    the report.  Fuse after loading weights: the fused parameters are copies,
    and the state dict's names change (``gate_up.weight``,
    ``qkv_proj.weight``).  Returns ``{"mlp": n, "qkv": n, "skipped":
    [names]}``.  Outputs equal the original model's within the dtype's
    rounding (the wider GEMM may sum in another order).
    """
    report: dict[str, object] = {"mlp": 0, "qkv": 0, "skipped": []}
    if not force and not _device.is_rocm():
        return report
    skipped: list[str] = report["skipped"]  # type: ignore[assignment]
    for name, module in list(model.named_modules()):
        if mlp and all(_is_linear(getattr(module, attr, None))
                       for attr in ("gate_proj", "up_proj", "down_proj")):
            act = _activation_name(getattr(module, "act_fn", None))
            gate, up = module.gate_proj, module.up_proj
            ok = (act is not None and gate.in_features == up.in_features
                  and gate.out_features == up.out_features
                  and (gate.bias is None) == (up.bias is None)
                  and gate.weight.dtype == up.weight.dtype
                  and gate.weight.device == up.weight.device)
            if ok and name:
                fused = FusedGatedMLP(fuse_gate_up(gate, up, activation=act), module.down_proj)
                if _same_result(module, fused, gate.in_features, gate.weight):
                    _replace(model, name, fused)
                    report["mlp"] = int(report["mlp"]) + 1  # type: ignore[call-overload]
                    continue
            skipped.append(f"{name} (gated MLP)")
        if qkv and all(_is_linear(getattr(module, attr, None))
                       for attr in ("q_proj", "k_proj", "v_proj")):
            layers = (module.q_proj, module.k_proj, module.v_proj)
            try:
                fused = fuse_qkv(*layers)
            except ValueError:
                skipped.append(f"{name} (q/k/v)")
                continue
            group = _QKVGroup(fused)
            slices = [ProjectionSlice(group, i) for i in range(3)]
            if all(_same_result(layer, piece, layer.in_features, layer.weight)
                   for layer, piece in zip(layers, slices)):
                module.qkv_proj = fused
                module.q_proj, module.k_proj, module.v_proj = slices
                report["qkv"] = int(report["qkv"]) + 1  # type: ignore[call-overload]
            else:
                skipped.append(f"{name} (q/k/v)")
    return report


def _replace(model: nn.Module, name: str, new: nn.Module) -> None:
    parent_name, _, child = name.rpartition(".")
    parent = model.get_submodule(parent_name) if parent_name else model
    setattr(parent, child, new)
