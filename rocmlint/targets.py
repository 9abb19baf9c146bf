"""AMD GPU targets (gfx names) and what each one has: one table for the
runtime (``device_info()``, the doctor) and the linter's ``arch`` and
``rocm-version`` settings, so that the two never disagree.

Pure data: no torch, no I/O; importing it costs nothing.

Sources (cited per fact below by their tag):

[SPECS]  ROCm documentation, "GPU hardware specifications" (reference/
         gpu-arch-specs): architecture, LLVM target name, wavefront size and
         LDS per CU for the AMD Instinct GPUs.
[LLVM]   LLVM, "User Guide for AMDGPU Backend" (AMDGPUUsage), processor table:
         target names, example products; GFX10 and later run wave32 by
         default (``wavefrontsize64`` is an optional target feature); and
         llvm/lib/Target/AMDGPU/AMDGPU.td, whose
         ``FeatureAddressableLocalMemorySize*`` features give the LDS one
         workgroup can address (65536 bytes, 163840 on gfx950).
[FP8]    gfx942 supports only the FNUZ fp8 variants (``float8_e4m3fnuz``,
         ``float8_e5m2fnuz``); gfx950 and gfx12 use the OCP variants
         (``float8_e4m3fn``, ``float8_e5m2``): hipBLASLt's data type support,
         aiter's dtype table (``aiter/utility/dtypes.py``), triton-lang/triton
         #7186.
[RDNA3]  AMD "RDNA3 Instruction Set Architecture" reference guide, WMMA
         section: the matrix instructions take f16, bf16, iu8 and iu4 inputs
         (no fp8).
[HIPFFT7] ROCm/hipFFT release for ROCm 7.0.0: "Added gfx950 support".
[RDNA4-641] ROCm 6.4.1 Linux system requirements (install-on-linux
         docs-6.4.1, reference/system-requirements, RDNA section): the
         Radeon RX 9000 series is supported.
[CU]     Compute units per product: the [SPECS] tables (Instinct and Radeon
         columns "Compute Units"), and AMD's product pages for the Radeon
         parts; a multi-die product (MI250, MI250X) counts every die, and each
         die is one device to PyTorch (half the count).  ``None`` where no
         figure was found.
[PRECISION] ROCm documentation, "Data types and precision support"
         (reference/precision-support), and the matrix instruction sets:
         MFMA on CDNA2 and later and WMMA on RDNA3/4 run bf16 at the fp16 rate;
         CDNA (MI100) runs bf16 MFMA at half the fp16 rate; GCN5 and RDNA2
         have no matrix instructions and no bf16 arithmetic (packed fp16 only).

``first_rocm`` is the earliest ROCm release a public source above shows
supporting the target; ``None`` where no source was found -- left unknown
rather than guessed.  The CDNA and GCN Instinct rows are ``None`` for now.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = [
    "GpuTarget",
    "FP8_FNUZ",
    "FP8_OCP",
    "known_targets",
    "target",
    "targets_in_family",
    "supported_in",
]

#: fp8 flavours: the MI300 (gfx942) "finite, no negative zero" encoding and
#: the Open Compute Project encoding.
FP8_FNUZ = "fnuz"
FP8_OCP = "ocp"


@dataclass(frozen=True)
class GpuTarget:
    """What one gfx target is and has."""

    name: str
    family: str                  # CDNA4, CDNA3, ..., RDNA4, RDNA3, GCN5.1, ...
    products: tuple[str, ...]
    wave_size: int               # default wavefront size the compiler uses
    fp8: str | None              # FP8_FNUZ, FP8_OCP, or None: no fp8 matrix support
    lds_kib: int                 # LDS one workgroup can address, KiB
    matrix_cores: str | None     # "MFMA" (CDNA), "WMMA" (RDNA3/4), None
    first_rocm: str | None       # earliest ROCm release known to support it
    # The 16-bit type the family computes at its full matrix (or packed) rate:
    # "bf16" where bf16 runs as fast as fp16, "fp16" where bf16 is slower or
    # has no instructions [PRECISION].  fp32 stays the default of PyTorch.
    default_precision: str = "fp16"
    compute_units: tuple[int | None, ...] = ()   # per product, same order [CU]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (lists instead of tuples, compute units by product)."""
        data = asdict(self)
        data["products"] = list(self.products)
        data["compute_units"] = dict(zip(self.products, self.compute_units))
        return data

    def product_for(self, device_name: str | None) -> str | None:
        """The product of this target that a device name (``"AMD Instinct
        MI300X"``) names: the longest product name it contains, or None."""
        if not device_name:
            return None
        text = " ".join(device_name.split()).lower()
        found = [p for p in self.products if p.lower() in text]
        return max(found, key=len) if found else None

    def compute_units_of(self, device_name: str | None) -> int | None:
        """Compute units of the product a device name names, or None."""
        product = self.product_for(device_name)
        if product is None:
            return None
        return dict(zip(self.products, self.compute_units)).get(product)


def _t(name: str, family: str, products: tuple[tuple[str, int | None], ...], wave: int,
       fp8: str | None, lds: int, matrix: str | None, first: str | None,
       precision: str) -> GpuTarget:
    return GpuTarget(name, family, tuple(p for p, _ in products), wave, fp8, lds, matrix, first,
                     precision, tuple(cu for _, cu in products))


_TABLE: dict[str, GpuTarget] = {
    t.name: t
    for t in (
        # --- Instinct, CDNA / GCN: wave64 [SPECS] -------------------------
        # LDS: 160 KiB on gfx950, 64 KiB before [SPECS] [LLVM].  fp8 [FP8].
        # Matrix cores (MFMA) from CDNA on [SPECS].  Precision [PRECISION].
        _t("gfx950", "CDNA4", (("Instinct MI350X", 256), ("Instinct MI355X", 256)), 64,
           FP8_OCP, 160, "MFMA", "7.0.0", "bf16"),  # first_rocm [HIPFFT7]
        _t("gfx942", "CDNA3", (("Instinct MI300X", 304), ("Instinct MI300A", 228),
                               ("Instinct MI325X", 304)),
           64, FP8_FNUZ, 64, "MFMA", None, "bf16"),
        # MI250 / MI250X: two dies of 104 / 110 CUs, each its own device.
        _t("gfx90a", "CDNA2", (("Instinct MI210", 104), ("Instinct MI250", 208),
                               ("Instinct MI250X", 220)),
           64, None, 64, "MFMA", None, "bf16"),
        _t("gfx908", "CDNA", (("Instinct MI100", 120),), 64, None, 64, "MFMA", None, "fp16"),
        # MI50/MI60 are GCN 5.1 (Vega 20) [SPECS]: no matrix cores, dot
        # instructions only.
        _t("gfx906", "GCN5.1", (("Instinct MI50", 60), ("Instinct MI60", 64)), 64, None, 64,
           None, None, "fp16"),
        _t("gfx900", "GCN5.0", (("Instinct MI25", 64),), 64, None, 64, None, None, "fp16"),
        # --- Radeon, RDNA: wave32 by default [LLVM]; 64 KiB LDS per
        # workgroup [LLVM] --------------------------------------------------
        _t("gfx1201", "RDNA4", (("Radeon RX 9070", 56), ("Radeon RX 9070 XT", 64),
                                ("Radeon RX 9070 GRE", 48)),
           32, FP8_OCP, 64, "WMMA", "6.4.1", "bf16"),  # first_rocm [RDNA4-641]
        _t("gfx1200", "RDNA4", (("Radeon RX 9060", 28), ("Radeon RX 9060 XT", 32)), 32,
           FP8_OCP, 64, "WMMA", "6.4.1", "bf16"),  # first_rocm [RDNA4-641]
        # RDNA3 / 3.5 WMMA has no fp8 inputs [RDNA3].
        _t("gfx1151", "RDNA3.5", (("Radeon 8060S", 40),), 32, None, 64, "WMMA", None, "bf16"),
        _t("gfx1150", "RDNA3.5", (("Radeon 890M", 16),), 32, None, 64, "WMMA", None, "bf16"),
        _t("gfx1102", "RDNA3", (("Radeon RX 7600", 32), ("Radeon RX 7600 XT", 32)), 32, None,
           64, "WMMA", None, "bf16"),
        _t("gfx1101", "RDNA3", (("Radeon RX 7700", None), ("Radeon RX 7700 XT", 54),
                                ("Radeon RX 7800 XT", 60)),
           32, None, 64, "WMMA", None, "bf16"),
        _t("gfx1100", "RDNA3", (("Radeon RX 7900 XTX", 96), ("Radeon RX 7900 XT", 84),
                                ("Radeon RX 7900 GRE", 80), ("Radeon PRO W7900", 96)),
           32, None, 64, "WMMA", None, "bf16"),
        # RDNA2 has no matrix instructions.
        _t("gfx1030", "RDNA2", (("Radeon RX 6800", 60), ("Radeon RX 6900 XT", 80),
                                ("Radeon PRO W6800", 60), ("Radeon PRO V620", 72)),
           32, None, 64, None, None, "fp16"),
    )
}


def _base_name(name: str) -> str:
    """``"gfx942:sramecc+:xnack-"`` -> ``"gfx942"`` (target features dropped,
    as in ``gcnArchName``), lower case, no surrounding spaces."""
    return name.strip().split(":", 1)[0].strip().lower()


def target(name: str) -> GpuTarget | None:
    """The table entry for a gfx name (target features such as ``:xnack-``
    are ignored), or ``None`` for a target the table does not know."""
    if not isinstance(name, str):
        return None
    return _TABLE.get(_base_name(name))


def known_targets() -> tuple[str, ...]:
    """Every gfx name in the table, sorted."""
    return tuple(sorted(_TABLE))


def targets_in_family(family: str) -> tuple[str, ...]:
    """gfx names of one family (``"CDNA3"``, ``"RDNA3"``, ...; case-insensitive)."""
    wanted = family.strip().upper()
    return tuple(sorted(n for n, t in _TABLE.items() if t.family.upper() == wanted))


def _version(text: str) -> tuple[int, ...]:
    parts = []
    for piece in text.strip().split("."):
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        parts.append(int(digits))
    if not parts:
        raise ValueError(f"not a ROCm version: {text!r}")
    return tuple(parts)


def supported_in(name: str, rocm_version: str) -> bool | None:
    """Whether ROCm ``rocm_version`` (e.g. ``"6.4"``, ``"6.4.1"``) supports the
    target: True or False when the table knows the first supporting release,
    None when the target or its first release is unknown.  Versions compare
    by their numbers, missing parts as 0 (``"6.4"`` is before ``"6.4.1"``)."""
    entry = target(name)
    if entry is None or entry.first_rocm is None:
        return None
    want, first = _version(rocm_version), _version(entry.first_rocm)
    width = max(len(want), len(first))
    want += (0,) * (width - len(want))
    first += (0,) * (width - len(first))
    return want >= first
