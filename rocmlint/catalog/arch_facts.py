"""The few facts about AMD GPU targets that the checks ask about, by target name, and how a
ROCm release is spelled.

Checks whose truth depends on the GPU (which fp8 types it computes with, its wavefront size,
its LDS, what `torch.cuda.get_device_capability()` reports on it, whether its BLAS has a TF32
mode) ask `arch_facts(name)`, the only place checks get arch facts from. Family, wave size,
fp8 flavour and LDS come from the AMD target table (`rocmlint.targets`, shared with the
runtime); gfx names the table does not list are read from the name's generation.
"""

from __future__ import annotations

import re

from rocmlint.records import record

_ROCM_RELEASE = re.compile(r"^\d+\.\d+(\.\d+)?$")


def parse_rocm_release(value: object, where: str) -> tuple[int, ...]:
    """"6.4" -> (6, 4), for a configuration's or a check file's ROCm release. Raises ValueError
    naming `where` (the file and key, or the option)."""
    if not isinstance(value, str) or not _ROCM_RELEASE.match(value.strip()):
        raise ValueError(f'{where} must be a ROCm release as a string, such as "6.4" or "7.0.2", got {value!r}')
    return tuple(int(part) for part in value.strip().split("."))


_GFX = re.compile(r"^gfx(?P<major>\d{1,2})(?P<minor>[0-9a-f])(?P<stepping>[0-9a-f])$")


@record
class ArchFacts:
    name: str
    family: str  # "gcn", "cdna" (wave64 data-centre GPUs) or "rdna" (wave32 by default)
    wave_size: int
    # The fp8 encoding its matrix cores use: "fnuz" (gfx940-gfx942: float8_e4m3fnuz and
    # float8_e5m2fnuz only), "ocp" (gfx950, gfx12: float8_e4m3fn / float8_e5m2, as NVIDIA),
    # or "none" (no fp8 matrix instructions).
    fp8: str
    # What torch.cuda.get_device_capability() returns on ROCm: the gfx major and minor
    # version (clr hip_device.cpp; gfx90a -> (9, 0), gfx942 -> (9, 4), gfx1100 -> (11, 0)).
    capability: tuple[int, int]
    # What `allow_tf32` / `set_float32_matmul_precision("high")` do on ROCm PyTorch: "xf32"
    # (gfx940-gfx942: hipBLASLt's xf32, PyTorch >= 2.6), "warns" (RDNA: no xf32; recent
    # PyTorch warns and retries without it, pytorch/pytorch#193345), "none" (no TF32 mode,
    # the flag does nothing) or "unknown" (no public evidence either way).
    tf32: str
    lds_kib: int = 64  # LDS one workgroup can address (rocmlint.targets)


def arch_facts(name: str) -> ArchFacts | None:
    """Facts about one gfx target (`gfx942`, `gfx1100`; feature suffixes such as
    `:sramecc+:xnack-` are ignored), or None for a name that is not an AMD GPU target."""
    from rocmlint.targets import target

    base = name.strip().lower().split(":", 1)[0]
    hit = _GFX.match(base)
    if hit is None:
        return None
    major, minor = int(hit.group("major")), int(hit.group("minor"), 16)
    listed = target(base)
    if listed is not None:
        family = "rdna" if listed.family.startswith("RDNA") else "cdna" if listed.family.startswith("CDNA") else "gcn"
        return ArchFacts(base, family, listed.wave_size, listed.fp8 or "none", (major, minor), _tf32(base, family), listed.lds_kib)
    if major == 9:
        if base in ("gfx940", "gfx941"):
            return ArchFacts(base, "cdna", 64, "fnuz", (major, minor), "xf32")
        if base in ("gfx902", "gfx904", "gfx909", "gfx90c"):
            return ArchFacts(base, "gcn", 64, "none", (major, minor), "none")
        return None
    if major in (10, 11, 12):
        fp8 = "ocp" if major == 12 else "none"
        return ArchFacts(base, "rdna", 32, fp8, (major, minor), "warns")
    return None


def _tf32(base: str, family: str) -> str:
    """What `allow_tf32` does there (see ArchFacts.tf32)."""
    if base in ("gfx940", "gfx941", "gfx942"):
        return "xf32"
    if base == "gfx950":
        return "unknown"
    if family == "rdna":
        return "warns"
    return "none"
