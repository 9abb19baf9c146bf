"""`[tool.rocmlint]` in pyproject.toml, read by every face.

The configuration used is the nearest pyproject.toml that has a `[tool.rocmlint]` table,
searching upward from a starting directory (the scanned path for `rocmlint scan`, the checked
file's directory for flake8) and stopping at the repository root (a directory with `.git`).

    [tool.rocmlint]
    select = ["ROCM"]            # check ids or id prefixes; default: every check enabled by default
    ignore = ["ROCM005"]         # ids or prefixes to leave out
    exclude = ["third_party/", "*_pb2.py"]   # gitignore-style patterns, relative to this file
    max-file-size = 1048576      # bytes; larger files are reported and skipped (0: no limit)
    cuda-only = ["csrc/sm90/"]   # gitignore-style: files the ROCm build never compiles
    rocm-sources = ["csrc/common/"]  # files the ROCm build does compile, whatever the build files say
    rocm-version = "6.4"         # the ROCm release the port targets (checks whose truth depends on it)
    arch = ["gfx942", "gfx1100"] # the AMD GPUs the port targets (fp8 types, wave size, TF32, ...)

Without `rocm-version` and `arch`, checks report what is wrong on any current ROCm release and
name the GPUs affected.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

DEFAULT_MAX_FILE_SIZE = 1024 * 1024


class ConfigError(ValueError):
    """The configuration is wrong; the message names the file and the key."""


@dataclass(frozen=True)
class Config:
    path: Path | None = None  # the pyproject.toml it came from, if any
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    root: Path = field(default_factory=Path.cwd)  # what `exclude` patterns are relative to
    cuda_only: tuple[str, ...] = ()  # files the ROCm build never compiles, for builds rocmlint cannot read
    rocm_sources: tuple[str, ...] = ()  # files the ROCm build compiles, whatever the build files seem to say
    target: "GpuTarget" = field(default_factory=lambda: GpuTarget())


@dataclass(frozen=True)
class GpuTarget:
    """The ROCm release and AMD GPUs a port targets; empty: any current release and GPU."""

    rocm_version: tuple[int, ...] | None = None  # (6, 4)
    archs: tuple[str, ...] = ()  # normalised gfx names, in the order given

    @property
    def configured(self) -> bool:
        return self.rocm_version is not None or bool(self.archs)


_VERSION = re.compile(r"^\d+\.\d+(\.\d+)?$")


def parse_rocm_version(value: object, where: str) -> tuple[int, ...]:
    """"6.4" -> (6, 4). `where` names the file and key (or the option) in the error."""
    if not isinstance(value, str) or not _VERSION.match(value.strip()):
        raise ConfigError(f'{where} must be a ROCm release as a string, such as "6.4" or "7.0.2", got {value!r}')
    return tuple(int(part) for part in value.strip().split("."))


def parse_archs(value: object, where: str) -> tuple[str, ...]:
    """["gfx942", "gfx1100"] -> the same, checked against the known AMD GPU targets."""
    from rocmlint.arch_facts import arch_facts

    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ConfigError(f'{where} must be a non-empty list of AMD GPU targets, such as ["gfx942", "gfx1100"], got {value!r}')
    archs: list[str] = []
    for name in value:
        facts = arch_facts(name)
        if facts is None:
            raise ConfigError(f"{where}: {name!r} is not an AMD GPU target rocmlint knows (gfx9xx, gfx10xx, gfx11xx, gfx12xx, as in `rocminfo`)")
        if facts.name not in archs:
            archs.append(facts.name)
    return tuple(archs)


_KEYS = {
    "select": list, "ignore": list, "exclude": list, "max-file-size": int, "cuda-only": list, "rocm-sources": list,
    "rocm-version": str, "arch": list,
}


def parse_config(table: dict, path: Path) -> Config:
    for key, value in table.items():
        if key not in _KEYS:
            raise ConfigError(f"{path}: unknown key [tool.rocmlint] {key} (known keys: {', '.join(_KEYS)})")
        expected = _KEYS[key]
        if key in ("rocm-version", "arch"):
            continue  # validated below, with their own wording
        if not isinstance(value, expected) or isinstance(value, bool):
            raise ConfigError(f"{path}: [tool.rocmlint] {key} must be a {'list of strings' if expected is list else 'number'}")
        if expected is list and not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{path}: [tool.rocmlint] {key} must be a list of strings")
    size = table.get("max-file-size", DEFAULT_MAX_FILE_SIZE)
    if size < 0:
        raise ConfigError(f"{path}: [tool.rocmlint] max-file-size must be 0 or more")
    target = GpuTarget(
        parse_rocm_version(table["rocm-version"], f"{path}: [tool.rocmlint] rocm-version") if "rocm-version" in table else None,
        parse_archs(table["arch"], f"{path}: [tool.rocmlint] arch") if "arch" in table else (),
    )
    return Config(
        path=path,
        select=tuple(table["select"]) if "select" in table else None,
        ignore=tuple(table.get("ignore", ())),
        exclude=tuple(table.get("exclude", ())),
        max_file_size=size,
        root=path.parent,
        cuda_only=tuple(table.get("cuda-only", ())),
        rocm_sources=tuple(table.get("rocm-sources", ())),
        target=target,
    )


def load_config_file(path: Path) -> Config:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from exc
    return _config_from_bytes(raw, path)


def _config_from_bytes(raw: bytes, path: Path) -> Config:
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from exc
    tool = data.get("tool", {})
    table = tool.get("rocmlint") if isinstance(tool, dict) else None  # `tool = 5` holds no [tool.rocmlint]
    if table is None:
        return Config(path=None, root=path.parent)
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.rocmlint] must be a table")
    return parse_config(table, path)


@lru_cache(maxsize=256)
def find_config(start: Path) -> Config:
    """The nearest [tool.rocmlint] table above `start` (a directory), or the defaults."""
    directory = start.resolve()
    for candidate in (directory, *directory.parents):
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
            try:
                raw = pyproject.read_bytes()
            except OSError:
                raw = b""
            # Most pyproject files have no rocmlint table: parse only those that mention it.
            if b"rocmlint" in raw:
                config = _config_from_bytes(raw, pyproject)
                if config.path is not None:
                    return config
        if (candidate / ".git").exists():
            break
    return Config(root=Path.cwd())
