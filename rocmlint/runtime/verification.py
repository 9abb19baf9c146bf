"""Numerical verification of a port (the porting guide's phase 8), and the
RNG-state bookkeeping of torch.compile made safe during graph capture (its
phase 7).

``verify(model, inputs)`` runs the forward and backward pass on the device the
inputs are on and again on a reference (the CPU in the same dtype, or the CPU in
float64), and reports the largest differences of every output and every
gradient against tolerances: the guide's 5e-2 for bf16/fp16, 1e-4 for float32.
It changes nothing in the model (no ``.grad`` is written) and raises only when
asked.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
from torch import nn

__all__ = ["verify", "VerifyResult", "Comparison", "VerificationError", "TOLERANCES"]

#: Default (rtol, atol) per dtype of the device run.  bf16/fp16: the porting
#: guide's 5e-2; float32: 1e-4 (the tolerance the runtime's own tier tests
#: use between kernels); float64: 1e-7.
TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.bfloat16: (5e-2, 5e-2),
    torch.float16: (5e-2, 5e-2),
    torch.float32: (1e-4, 1e-4),
    torch.float64: (1e-7, 1e-7),
}

_REFERENCES = ("cpu", "float64")


class VerificationError(AssertionError):
    """Raised by ``verify(..., raise_on_failure=True)`` and
    ``VerifyResult.raise_if_failed()``; carries the result."""

    def __init__(self, result: "VerifyResult") -> None:
        super().__init__(str(result))
        self.result = result


@dataclass(frozen=True)
class Comparison:
    """One output or gradient: the device's value against the reference's."""

    name: str              # "output[0]", "grad input[1]", "grad weight of fc1", ...
    kind: str              # "output" or "gradient"
    dtype: str
    shape: tuple[int, ...]
    max_abs: float         # largest |device - reference|
    max_rel: float         # largest |device - reference| / |reference| where it is not 0
    rtol: float
    atol: float
    passed: bool           # every element within atol + rtol * |reference|; NaNs alike


@dataclass
class VerifyResult:
    """What ``verify`` found; ``passed`` when every comparison passed."""

    device: str
    reference: str
    comparisons: list[Comparison] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.comparisons)

    @property
    def failures(self) -> list[Comparison]:
        return [c for c in self.comparisons if not c.passed]

    def raise_if_failed(self) -> "VerifyResult":
        if not self.passed:
            raise VerificationError(self)
        return self

    def __str__(self) -> str:
        head = (f"verify: {'passed' if self.passed else 'FAILED'} ({self.device} against "
                f"{self.reference}, {len(self.comparisons)} comparisons)")
        lines = [head]
        for c in self.comparisons:
            lines.append(f"  {'ok  ' if c.passed else 'FAIL'} {c.name:<32} {c.dtype:<9} "
                         f"max|diff| {c.max_abs:.3g}  max rel {c.max_rel:.3g}  "
                         f"(rtol {c.rtol:g}, atol {c.atol:g})")
        return "\n".join(lines)


def _flatten(value: Any, prefix: str) -> list[tuple[str, torch.Tensor]]:
    """Floating-point tensors of an output: a tensor, or tuples, lists and
    dicts of them, with a name for each."""
    if isinstance(value, torch.Tensor):
        return [(prefix, value)] if value.is_floating_point() else []
    if isinstance(value, dict):  # Hugging Face ModelOutput is an OrderedDict
        return [pair for key, item in value.items()
                for pair in _flatten(item, f"{prefix}.{key}")]
    if isinstance(value, (tuple, list)):
        return [pair for i, item in enumerate(value) for pair in _flatten(item, f"{prefix}[{i}]")]
    return []


def _as_args(inputs: Any) -> tuple:
    if isinstance(inputs, tuple):
        return inputs
    if isinstance(inputs, list):
        return tuple(inputs)
    return (inputs,)


def _prepare(args: tuple, device: torch.device | None, dtype: torch.dtype | None):
    """Detached copies of the floating-point tensors (on ``device`` / in
    ``dtype`` when given) that require gradients; other arguments as they are."""
    out = []
    leaves = []
    for arg in args:
        if isinstance(arg, torch.Tensor):
            t = arg.detach()
            if device is not None:
                t = t.to(device)
            if arg.is_floating_point():
                if dtype is not None:
                    t = t.to(dtype)
                t = t.clone().requires_grad_(True)
                leaves.append(t)
            out.append(t)
        else:
            out.append(arg)
    return tuple(out), leaves


def _run(fn: Callable, args: tuple, params: list[tuple[str, torch.Tensor]], seed: int):
    """Forward, then gradients of a fixed random projection of every output
    with respect to the floating-point inputs and the parameters."""
    outputs = _flatten(fn(*args), "output")
    if not outputs:
        raise TypeError("verify: the call returned no floating-point tensor to compare")
    leaves = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
    wrt = leaves + [p for _, p in params]
    grads: list[torch.Tensor | None] = []
    differentiable = [(n, o) for n, o in outputs if o.requires_grad]
    if differentiable and wrt:
        gen = torch.Generator().manual_seed(seed)
        # The same cotangent for both runs: drawn in float64 on the CPU.
        cotangents = [torch.randn(o.shape, generator=gen, dtype=torch.float64)
                      .to(device=o.device, dtype=o.dtype) for _, o in differentiable]
        grads = list(torch.autograd.grad([o for _, o in differentiable], wrt, cotangents,
                                         allow_unused=True))
    return outputs, grads


def _compare(name: str, kind: str, got: torch.Tensor, want: torch.Tensor,
             rtol: float | None, atol: float | None) -> Comparison:
    default_rtol, default_atol = TOLERANCES.get(got.dtype, (1e-4, 1e-4))
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    if got.shape != want.shape:
        return Comparison(name, kind, str(got.dtype).replace("torch.", ""), tuple(got.shape),
                          float("inf"), float("inf"), rtol, atol, False)
    a = got.detach().to("cpu", torch.float64)
    b = want.detach().to("cpu", torch.float64)
    nan_same = torch.equal(a.isnan(), b.isnan())
    finite = ~(a.isnan() | b.isnan())
    diff = (a - b).abs().where(finite, torch.zeros((), dtype=torch.float64))
    # Equal infinities differ by NaN: they agree.
    diff = diff.nan_to_num(nan=0.0)
    max_abs = float(diff.max()) if diff.numel() else 0.0
    nonzero = b.abs() > 0
    rel = (diff / b.abs()).where(nonzero & finite, torch.zeros((), dtype=torch.float64))
    max_rel = float(rel.max()) if rel.numel() else 0.0
    within = bool((diff <= atol + rtol * b.abs().nan_to_num(nan=0.0)).all())
    return Comparison(name, kind, str(got.dtype).replace("torch.", ""), tuple(got.shape),
                      max_abs, max_rel, rtol, atol, within and nan_same)


def verify(
    module_or_fn: nn.Module | Callable[..., Any],
    inputs: Any,
    *,
    reference: str = "cpu",
    rtol: float | None = None,
    atol: float | None = None,
    grads: bool = True,
    raise_on_failure: bool = False,
    seed: int = 0,
) -> VerifyResult:
    """Run ``module_or_fn(*inputs)`` forward and backward where the inputs are
    (the GPU, usually) and on a reference, and compare every output and
    gradient.

    Args:
        module_or_fn: an ``nn.Module`` (copied for the reference run; the
            original is not changed: no ``.grad`` is written) or a function of
            tensors.
        inputs: a tensor or a tuple/list of positional arguments; tensors that
            are floating point get gradients.
        reference: ``"cpu"`` runs a copy on the CPU in the same dtypes;
            ``"float64"`` runs it on the CPU in float64 (the dtypes' rounding
            is then part of the difference).
        rtol, atol: tolerances; by default per dtype of the device run,
            ``TOLERANCES`` (5e-2 for bf16/fp16, the porting guide's).
        grads: also compare the gradients of the floating-point inputs and the
            parameters (of a fixed random projection of the outputs).
        raise_on_failure: raise ``VerificationError`` when a comparison fails.
        seed: seed of the projection's random weights.

    A function is called with the reference's inputs as they are: it must
    take every tensor it uses as an argument (a module is copied instead).

    Returns ``VerifyResult``: ``passed``, ``comparisons`` (name, largest
    absolute and relative difference, tolerances) and ``failures``;
    ``print(result)`` shows the table.  Put the model in ``eval()`` mode (or
    switch dropout off) first: random layers cannot agree between two runs.
    """
    if reference not in _REFERENCES:
        raise ValueError(f"verify: reference must be 'cpu' or 'float64', not {reference!r}")
    if not callable(module_or_fn):
        raise TypeError(f"verify: expected an nn.Module or a function, got "
                        f"{type(module_or_fn).__name__}")
    args = _as_args(inputs)
    device_args, _ = _prepare(args, None, None)
    first = next((a for a in device_args if isinstance(a, torch.Tensor)), None)
    device = str(first.device) if first is not None else "cpu"
    ref_dtype = torch.float64 if reference == "float64" else None
    ref_args, _ = _prepare(args, torch.device("cpu"), ref_dtype)

    if isinstance(module_or_fn, nn.Module):
        module = module_or_fn
        ref_module = copy.deepcopy(module).to("cpu")
        if ref_dtype is not None:
            ref_module = ref_module.to(ref_dtype)
        params = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        ref_params = [(n, p) for n, p in ref_module.named_parameters() if p.requires_grad]
        device_fn: Callable[..., Any] = module
        ref_fn: Callable[..., Any] = ref_module
    else:
        params, ref_params = [], []
        device_fn = ref_fn = module_or_fn
    if not grads:
        params, ref_params = [], []

    with torch.set_grad_enabled(grads):
        out, out_grads = _run(device_fn, device_args, params, seed)
        ref_out, ref_grads = _run(ref_fn, ref_args, ref_params, seed)

    result = VerifyResult(device=device, reference=reference)
    ref_by_name = dict(ref_out)
    for name, tensor in out:
        if name not in ref_by_name:
            raise RuntimeError(f"verify: the reference run returned no {name}")
        result.comparisons.append(_compare(name, "output", tensor, ref_by_name[name], rtol,
                                           atol))
    if grads:
        arg_names = [f"input[{i}]" for i, a in enumerate(device_args)
                     if isinstance(a, torch.Tensor) and a.requires_grad]
        names = [f"grad {n}" for n in arg_names] + [f"grad {n}" for n, _ in params]
        for name, got, want in zip(names, out_grads, ref_grads):
            if got is None and want is None:
                continue  # neither run uses this input or parameter
            # Unused on one side only: its gradient there is zero.
            got = torch.zeros_like(want) if got is None else got
            want = torch.zeros_like(got) if want is None else want
            result.comparisons.append(_compare(name, "gradient", got, want, rtol, atol))
    if raise_on_failure:
        result.raise_if_failed()
    return result
