"""aiter GEMM extras for ROCm: tuned per-shape GEMM tables and preshuffled
weights.  Both do nothing off ROCm (and without AMD's aiter).

- ``add_tuned_gemm_configs(*csv_paths)`` puts tuned-config CSVs on aiter's
  search path (``AITER_CONFIG_GEMM_BF16`` and friends, colon-separated, read
  when aiter is imported) in front of aiter's own table, which stays on it.
- ``preshuffle_linears(model)`` gives eligible ``nn.Linear`` layers a copy of
  their weight in aiter's preshuffled tile order (``aiter.ops.shuffle.
  shuffle_weight``; aiter's tuned GEMM reads the ``is_shuffled`` tag and picks
  its preshuffled kernels).  Calls with fewer than ``min_tokens`` rows keep the
  plain weight: preshuffled kernels target large GEMMs, and small (decode)
  GEMMs are reported to regress with them.

No AMD GPU was available to this project: these paths are checked only
against fakes that follow aiter's published interfaces (tests/runtime).
"""

from __future__ import annotations

import csv
import importlib.util
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import torch
from torch import nn

from . import device as _device
from .warn_once import OnceWarnings

__all__ = [
    "GEMM_CONFIG_VARS",
    "DEFAULT_MIN_TOKENS",
    "THRESHOLD_VARIABLE",
    "add_tuned_gemm_configs",
    "preshuffle_linears",
    "PreshuffledLinear",
]

#: aiter's tuned-table environment variables and the default file each one
#: replaces (aiter/jit/core.py ``AITER_CONFIGS``; aiter's GEMM tuning guide:
#: "All support colon-separated multi-path values for merging").
GEMM_CONFIG_VARS: dict[str, tuple[str, str]] = {
    "bf16": ("AITER_CONFIG_GEMM_BF16", "bf16_tuned_gemm.csv"),
    "a8w8": ("AITER_CONFIG_GEMM_A8W8", "a8w8_tuned_gemm.csv"),
    "a8w8_bpreshuffle": ("AITER_CONFIG_GEMM_A8W8_BPRESHUFFLE",
                         "a8w8_bpreshuffle_tuned_gemm.csv"),
    "a8w8_blockscale": ("AITER_CONFIG_GEMM_A8W8_BLOCKSCALE",
                        "a8w8_blockscale_tuned_gemm.csv"),
    "a4w4": ("AITER_CONFIG_GEMM_A4W4", "a4w4_blockscale_tuned_gemm.csv"),
}

#: Rows (tokens, the GEMM's M) from which a preshuffled layer uses the
#: preshuffled weight: the porting guide's ``PRESHUFFLE_M_THRESH`` default.
#: Not measured on AMD hardware here: a starting point to tune per model and GPU.
DEFAULT_MIN_TOKENS = 128

#: The porting guide's switch for the threshold: rows from which the
#: preshuffled weight is used; 0 = every GEMM, -1 = no preshuffling at all.
THRESHOLD_VARIABLE = "PRESHUFFLE_M_THRESH"

#: Device types whose tensors may go to aiter (ROCm tensors report "cuda").
#: The contract tests widen it to run fakes on CPU.
AITER_DEVICE_TYPES = frozenset({"cuda"})

_HALF = (torch.float16, torch.bfloat16)


def _aiter_package_dir() -> Path | None:
    try:
        spec = importlib.util.find_spec(_device.AITER_MODULE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _check_csv(path: str) -> str:
    if ":" in path:
        raise ValueError(f"add_tuned_gemm_configs: {path!r} contains ':', aiter's path "
                         "separator")
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"add_tuned_gemm_configs: no such file: {path}")
    with open(file, encoding="utf-8", newline="") as fh:
        header = next(csv.reader(fh), [])
    columns = {name.strip() for name in header}
    missing = [name for name in ("M", "N", "K") if name not in columns]
    if missing:
        raise ValueError(f"add_tuned_gemm_configs: {path} is not a tuned GEMM table (no "
                         f"{', '.join(missing)} column in its header)")
    return str(file.resolve())


def add_tuned_gemm_configs(*csv_paths: str | os.PathLike, kind: str = "bf16",
                           environ: Any = None) -> str | None:
    """Add tuned GEMM config CSVs to aiter's search path without dropping its
    defaults.  Call before aiter is imported (aiter reads the variable then).

    ``kind`` picks the table (``GEMM_CONFIG_VARS``: ``"bf16"`` for
    ``gemm_a16w16``, ``"a8w8"``, ...).  The new files go first, then what the
    variable already held or, when unset, aiter's own default table.  Returns
    the new value, or None when nothing changed: off ROCm, or without aiter.
    Files are checked (they must exist and have ``M``, ``N``, ``K`` columns)
    on every platform, so a bad path fails where it is written.
    """
    if kind not in GEMM_CONFIG_VARS:
        raise ValueError(f"add_tuned_gemm_configs: kind must be one of "
                         f"{sorted(GEMM_CONFIG_VARS)}, not {kind!r}")
    if not csv_paths:
        raise ValueError("add_tuned_gemm_configs: give at least one CSV file")
    paths = [_check_csv(os.fspath(p)) for p in csv_paths]
    if not _device.is_rocm():
        return None
    package = _aiter_package_dir()
    if package is None:
        warnings.warn("add_tuned_gemm_configs: aiter is not installed; nothing changed",
                      RuntimeWarning, stacklevel=2)
        return None
    env = os.environ if environ is None else environ
    var, default_name = GEMM_CONFIG_VARS[kind]
    current = env.get(var)
    if current:
        entries = [e for e in current.split(":") if e]
    else:
        default = package / "configs" / default_name
        entries = [str(default)] if default.is_file() else []
    merged = paths + [e for e in entries if e not in paths]
    value = ":".join(dict.fromkeys(merged))
    env[var] = value
    if environ is None and _device.AITER_MODULE in sys.modules:
        warnings.warn(
            f"add_tuned_gemm_configs: aiter is already imported and has read {var}; the "
            "new tables apply to processes started after this call",
            RuntimeWarning,
            stacklevel=2,
        )
    return value


# --------------------------------------------------------------------------
# Preshuffled weights
# --------------------------------------------------------------------------

_warnings = OnceWarnings(stacklevel=2)


class PreshuffledLinear(nn.Module):
    """An ``nn.Linear`` that also holds its weight in aiter's preshuffled
    order (a non-persistent buffer: the state dict is unchanged).

    ``forward`` uses the preshuffled weight with aiter's tuned GEMM when the
    input has at least ``min_tokens`` rows, no gradient is needed, and the
    kernel has not failed before; otherwise ``F.linear`` with the plain weight
    (on ROCm through ``rocmlint.runtime.linear``).  Memory: the layer's weight
    is held twice.
    """

    def __init__(self, layer: nn.Linear, shuffled: torch.Tensor, gemm: Any,
                 min_tokens: int) -> None:
        super().__init__()
        self.in_features = layer.in_features
        self.out_features = layer.out_features
        self.weight = layer.weight
        self.bias = layer.bias
        self.register_buffer("weight_shuffled", shuffled, persistent=False)
        object.__setattr__(self, "_gemm", gemm)
        self.min_tokens = int(min_tokens)
        self.failed = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.numel() // max(1, x.shape[-1])
        if (
            rows >= self.min_tokens
            and not self.failed
            and x.dtype == self.weight_shuffled.dtype
            and not (torch.is_grad_enabled()
                     and (x.requires_grad or self.weight.requires_grad))
        ):
            shuffled = self.weight_shuffled
            if not getattr(shuffled, "is_shuffled", False):
                # Moving the module (``.to()``) makes a new tensor without
                # the tag aiter's tuned GEMM reads.
                shuffled.is_shuffled = True
            try:
                return self._gemm(x, shuffled, self.bias)
            except Exception as exc:
                self.failed = True
                _warnings.warn("preshuffled", f"rocmlint.runtime.PreshuffledLinear: aiter GEMM "
                               f"with the preshuffled weight failed ({type(exc).__name__}: "
                               f"{exc}); using the plain weight")
        from .ops import linear

        return linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}, min_tokens={self.min_tokens}")


def _shuffle_and_gemm() -> tuple[Any, Any] | None:
    """aiter's ``shuffle_weight`` and tuned GEMM operator, or None."""
    if not _device.aiter_available():
        return None
    module, _ = _device.import_guarded(_device.AITER_MODULE + ".ops.shuffle")
    shuffle = getattr(module, "shuffle_weight", None) if module is not None else None
    gemm = _device.aiter_op("gemm_a16w16")
    if not callable(shuffle) or gemm is None:
        return None
    return shuffle, gemm


def _eligible(layer: nn.Module) -> bool:
    if type(layer) is not nn.Linear:
        return False
    w = layer.weight
    n, k = w.shape
    # shuffle_weight(layout=(16, 16)) tiles N by 16 and K by 32 for 16-bit
    # types (aiter/ops/shuffle.py: BN = 16, BK = 2 * 16).
    return (w.dtype in _HALF and w.device.type in AITER_DEVICE_TYPES
            and n % 16 == 0 and k % 32 == 0)


def _threshold(min_tokens: Any) -> int:
    """The row threshold: ``min_tokens`` when given, else
    ``PRESHUFFLE_M_THRESH``, else ``DEFAULT_MIN_TOKENS``."""
    where = "min_tokens"
    if min_tokens is None:
        text = os.environ.get(THRESHOLD_VARIABLE)
        if text is None or not text.strip():
            return DEFAULT_MIN_TOKENS
        where = f"{THRESHOLD_VARIABLE}={text!r}"
        try:
            min_tokens = int(text.strip())
        except ValueError:
            raise ValueError(f"preshuffle_linears: {where} is not an integer (rows; 0 = every "
                             "GEMM, -1 = off)") from None
    if isinstance(min_tokens, bool) or not isinstance(min_tokens, int) or min_tokens < -1:
        raise ValueError(f"preshuffle_linears: {where} must be an int >= -1 (rows; 0 = every "
                         f"GEMM, -1 = off), got {min_tokens!r}")
    return min_tokens


def preshuffle_linears(model: nn.Module, *, min_tokens: int | None = None) -> int:
    """Replace eligible ``nn.Linear`` layers of ``model`` with
    ``PreshuffledLinear``; returns how many were replaced (0 off ROCm, without
    aiter, or with the threshold -1, where the model is not touched).

    Eligible: exactly ``nn.Linear``, fp16/bf16 weight on the GPU, out features
    a multiple of 16 and in features a multiple of 32 (the tiles of aiter's
    ``shuffle_weight(layout=(16, 16))``).  ``min_tokens``: inputs with fewer
    rows use the plain weight; 0 uses the preshuffled one for every input, -1
    turns preshuffling off.  When not given, ``PRESHUFFLE_M_THRESH`` from the
    environment, else 128.
    """
    min_tokens = _threshold(min_tokens)
    if min_tokens == -1:
        return 0
    if not _device.is_rocm():
        return 0
    found = _shuffle_and_gemm()
    if found is None:
        return 0
    shuffle, gemm = found
    count = 0
    for name, layer in list(model.named_modules()):
        if not name or not _eligible(layer):
            continue
        with torch.no_grad():
            shuffled = shuffle(layer.weight.detach(), layout=(16, 16))
        parent_name, _, child = name.rpartition(".")
        parent = model.get_submodule(parent_name) if parent_name else model
        setattr(parent, child, PreshuffledLinear(layer, shuffled, gemm, min_tokens))
        count += 1
    return count


def _reset_for_tests() -> None:
    _warnings.clear()
