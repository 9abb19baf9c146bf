"""Configuration: `[tool.rocmlint]` in pyproject.toml, or the same keys at the top of a
rocmlint.toml, read by every face.

As in ruff, each file is checked with the configuration nearest to it: the first directory
upward from the file that holds a .rocmlint.toml or rocmlint.toml, or a pyproject.toml with a `[tool.rocmlint]`
table (rocmlint.toml wins when a directory has both), stopping at the repository root (a
directory with `.git`). Without one, the defaults apply. `--config FILE` names one file for
every scanned file instead, and `--isolated` ignores configuration files altogether.

    [tool.rocmlint]
    select = ["ROCM"]            # check ids or id prefixes; default: every check enabled by default
    extend-select = ["ROCM901"]  # added to `select` (or to the defaults)
    ignore = ["ROCM005"]         # ids or prefixes to leave out
    per-file-ignores = { "tests/**" = ["ROCM001"] }   # gitignore-style pattern -> ids or prefixes
    exclude = ["third_party/", "*_pb2.py"]   # gitignore-style patterns, relative to this file
    extend-exclude = ["gen/"]    # more of the same: both add to the folders always skipped
    max-file-size = 1048576      # bytes; larger files are reported and skipped (0: no limit)
    cuda-only = ["csrc/sm90/"]   # gitignore-style: files the ROCm build never compiles
    rocm-sources = ["csrc/common/"]  # files the ROCm build does compile, whatever the build files say
    rocm-version = "6.4"         # the ROCm release the port targets (checks whose truth depends on it)
    arch = ["gfx942", "gfx1100"] # the AMD GPUs the port targets (fp8 types, wave size, TF32, ...)

Without `rocm-version` and `arch`, checks report what is wrong on any current ROCm release and
name the GPUs affected. A wrong key or value is a ConfigError whose message names the file and
the key; nothing here raises anything else on bad input.
"""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path

from rocmlint.records import field, record

DEFAULT_MAX_FILE_SIZE = 1024 * 1024
# In one directory, the first of these that holds a configuration is the one used.
# (.rocmlint.toml, a hidden rocmlint.toml, first, as ruff reads .ruff.toml before ruff.toml.)
CONFIG_FILE_NAMES = (".rocmlint.toml", "rocmlint.toml", "pyproject.toml")


class ConfigError(ValueError):
    """The configuration is wrong; the message names the file and the key."""


@record
class GpuTarget:
    """The ROCm release and AMD GPUs a port targets; empty: any current release and GPU."""

    rocm_version: tuple[int, ...] | None = None  # (6, 4)
    archs: tuple[str, ...] = ()  # normalised gfx names, in the order given

    @property
    def configured(self) -> bool:
        return self.rocm_version is not None or bool(self.archs)


@record
class Config:
    path: Path | None = None  # the file it came from, if any
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    # (gitignore-style pattern relative to `root`, ids or prefixes left out in matching files)
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = ()  # `exclude` and `extend-exclude` together
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    root: Path = field(default_factory=Path.cwd)  # what patterns are relative to
    cuda_only: tuple[str, ...] = ()  # files the ROCm build never compiles, for builds rocmlint cannot read
    rocm_sources: tuple[str, ...] = ()  # files the ROCm build compiles, whatever the build files seem to say
    target: GpuTarget = field(default_factory=GpuTarget)
    preview: bool = False  # run the checks in preview too (measured right less than 9 times in 10)

    def ignored_here(self, path: str | Path) -> tuple[str, ...]:
        """The ids and prefixes `per-file-ignores` leaves out for `path`."""
        if not self.per_file_ignores:
            return ()
        relative = _relative(path, self.root)
        if relative is None:
            return ()
        return per_file_codes(self.per_file_ignores, relative)


def per_file_codes(per_file_ignores, relative: str) -> tuple[str, ...]:
    """The ids and prefixes a list of (pattern, ids) leaves out for `relative` ("/"-separated,
    relative to the patterns' folder). A pattern that starts with `!` applies to every file it
    does not match (as in ruff): `"!src/**" = ["ROCM0"]` leaves ROCM0 out everywhere but in src/."""
    codes: list[str] = []
    for pattern, ids in per_file_ignores:
        negated = pattern.startswith("!")
        matched = _patterns((pattern[1:] if negated else pattern,)).leaves_out(relative, False) is not None
        if matched != negated:
            codes.extend(ids)
    return tuple(codes)


@lru_cache(maxsize=256)
def _patterns(patterns: tuple[str, ...]):
    """Patterns matched as `exclude` matches them (rocmlint.files.gitignore): one reading of
    gitignore patterns for every key that takes them."""
    from rocmlint.files.gitignore import PatternList

    return PatternList(patterns, "", "configuration")


def _relative(path: str | Path, root: Path) -> str | None:
    absolute, base = os.path.abspath(path), os.path.abspath(root)
    relative = os.path.relpath(absolute, base)
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return None
    return relative.replace(os.sep, "/")


def parse_rocm_version(value: object, where: str) -> tuple[int, ...]:
    """"6.4" -> (6, 4). `where` names the file and key (or the option) in the error."""
    from rocmlint.catalog.arch_facts import parse_rocm_release

    try:
        return parse_rocm_release(value, where)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def parse_archs(value: object, where: str) -> tuple[str, ...]:
    """["gfx942", "gfx1100"] -> the same, checked against the known AMD GPU targets."""
    from rocmlint.catalog.arch_facts import arch_facts

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


def check_selectors(values: object, where: str) -> tuple[str, ...]:
    """A list of check ids or id prefixes ("ROCM0", "ALL"), each naming at least one check."""
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ConfigError(f'{where} must be a list of strings (check ids or prefixes, such as ["ROCM001", "ROCM2"]), got {values!r}')
    from rocmlint.catalog.loader import load_catalog

    ids = [c.id for c in load_catalog()]
    for value in values:
        selector = value.strip().upper()
        if not selector or not (selector == "ALL" or any(i.startswith(selector) for i in ids)):
            raise ConfigError(f"{where}: unknown check or prefix {value!r} (see `rocmlint rules`)")
    return tuple(v.strip().upper() for v in values)


def _strings(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of strings, got {value!r}")
    return tuple(value)


def _size(value: object, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ConfigError(f"{where} must be a number (bytes; 0 for no limit), got {value!r}")
    if value < 0:
        raise ConfigError(f"{where} must be 0 or more, got {value}")
    return value


def _flag(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where} must be true or false, got {value!r}")
    return value


def _per_file_ignores(value: object, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, dict):
        raise ConfigError(f'{where} must be a table of pattern = [check ids], such as {{ "tests/**" = ["ROCM001"] }}, got {value!r}')
    for pattern in value:
        if not pattern.lstrip("!").strip():
            raise ConfigError(f"{where}: an empty pattern {pattern!r} matches no file")
    return tuple((pattern, check_selectors(ids, f"{where} {pattern!r}")) for pattern, ids in value.items())


# key -> how its value is read (the reader names the file and key in its errors)
_READERS = {
    "select": check_selectors,
    "extend-select": check_selectors,
    "ignore": check_selectors,
    "per-file-ignores": _per_file_ignores,
    "exclude": _strings,
    "extend-exclude": _strings,
    "max-file-size": _size,
    "cuda-only": _strings,
    "rocm-sources": _strings,
    "rocm-version": parse_rocm_version,
    "arch": parse_archs,
    "preview": _flag,
}
KNOWN_KEYS = tuple(_READERS)


def parse_config(table: dict, path: Path, section: str = "[tool.rocmlint] ") -> Config:
    """Read a configuration table. `section` is how keys are named in errors: "[tool.rocmlint] "
    in a pyproject.toml, "" at the top of a rocmlint.toml."""
    values = {}
    for key, value in table.items():
        reader = _READERS.get(key)
        if reader is None:
            raise ConfigError(f"{path}: unknown key {section}{key} (known keys: {', '.join(KNOWN_KEYS)})")
        values[key] = reader(value, f"{path}: {section}{key}")
    return Config(
        path=path,
        select=values.get("select"),
        extend_select=values.get("extend-select", ()),
        ignore=values.get("ignore", ()),
        per_file_ignores=values.get("per-file-ignores", ()),
        exclude=values.get("exclude", ()) + values.get("extend-exclude", ()),
        max_file_size=values.get("max-file-size", DEFAULT_MAX_FILE_SIZE),
        root=path.parent,
        cuda_only=values.get("cuda-only", ()),
        rocm_sources=values.get("rocm-sources", ()),
        target=GpuTarget(values.get("rocm-version"), values.get("arch", ())),
        preview=values.get("preview", False),
    )


def load_config_file(path: Path) -> Config:
    """The configuration in one file: `[tool.rocmlint]` of a pyproject.toml (or of any file
    laid out like one), else the top-level keys (rocmlint.toml)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    return _config_from_bytes(raw, path)


def toml_parser():
    """The TOML module, imported on first use: a tree without configuration files (and each
    flake8 run there) need not pay for importing it."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    return tomllib


def _config_from_bytes(raw: bytes, path: Path) -> Config:
    """Config(path=None) when a pyproject.toml has no [tool.rocmlint] table."""
    tomllib = toml_parser()
    try:
        data = tomllib.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read: not valid UTF-8 (byte {exc.start})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: cannot read: not valid TOML: {exc}") from exc
    if path.name == "pyproject.toml" or "tool" in data:
        tool = data.get("tool", {})
        if not isinstance(tool, dict):
            raise ConfigError(f"{path}: `tool` must be a table (where [tool.rocmlint] lives), got {tool!r}")
        table = tool.get("rocmlint")
        if table is None:
            return Config(path=None, root=path.parent)
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [tool.rocmlint] must be a table, got {table!r}")
        return parse_config(table, path)
    return parse_config(data, path, section="")


@lru_cache(maxsize=8192)  # one entry per folder of a scan
def find_config(start: Path) -> Config:
    """The configuration nearest to the directory `start`, or the defaults."""
    return _config_here_or_above(_real_folder(os.path.abspath(start))) or Config(root=Path.cwd())


@lru_cache(maxsize=8192)
def _real_folder(folder: str) -> str:
    """os.path.realpath of a folder, each folder above it resolved once for all the folders
    below (rocmlint.files.discovery.real_folder)."""
    from rocmlint.files.discovery import real_folder

    return real_folder(folder, _real_folder)


@lru_cache(maxsize=8192)
def _config_here_or_above(directory: str) -> Config | None:
    """The configuration in `directory` or the nearest folder above it, up to the top of a git
    work tree; None when there is none. Kept per folder, so that the folders of a big tree
    share the look at their common parents."""
    for name in CONFIG_FILE_NAMES:
        config_file = os.path.join(directory, name)
        if not os.path.isfile(config_file):
            continue
        try:
            with open(config_file, "rb") as handle:
                raw = handle.read()
        except OSError as exc:
            raise ConfigError(f"{config_file}: cannot read: {exc.strerror or exc}") from exc
        # Most pyproject files have no rocmlint table: parse only those that mention it.
        if name == "pyproject.toml" and b"rocmlint" not in raw:
            continue
        config = _config_from_bytes(raw, Path(config_file))
        if config.path is not None:
            return config
    parent = os.path.dirname(directory)
    if os.path.exists(os.path.join(directory, ".git")) or parent == directory:
        return None
    return _config_here_or_above(parent)


def config_for_file(path: str | Path) -> Config:
    """The configuration nearest to a file (or a directory itself)."""
    path = Path(path)
    directory = path if path.is_dir() else path.parent
    return find_config(Path(os.path.abspath(directory)))


# --config KEY=VALUE: a key of the configuration and the Config field it sets.
_OVERRIDDEN_FIELDS = {
    "select": "select",
    "extend-select": "extend_select",
    "ignore": "ignore",
    "per-file-ignores": "per_file_ignores",
    "exclude": "exclude",
    "max-file-size": "max_file_size",
    "cuda-only": "cuda_only",
    "rocm-sources": "rocm_sources",
    "preview": "preview",
}


def parse_override(text: str) -> tuple[str, object]:
    """`--config 'select = ["ROCM0"]'`: one TOML `key = value` line, read as that key of a
    configuration file is read. Returns (key, the value read)."""
    tomllib = toml_parser()
    where = f"--config {text!r}"
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: neither a configuration file nor a TOML `key = value`: {exc}") from None
    if len(table) != 1:
        raise ConfigError(f"{where}: give one `key = value` per --config")
    key, value = next(iter(table.items()))
    if key == "tool" and isinstance(value, dict) and list(value) == ["rocmlint"] and isinstance(value["rocmlint"], dict) and len(value["rocmlint"]) == 1:
        key, value = next(iter(value["rocmlint"].items()))  # tool.rocmlint.select = [...]
    reader = _READERS.get(key)
    if reader is None:
        raise ConfigError(f"{where}: unknown key {key} (known keys: {', '.join(KNOWN_KEYS)})")
    return key, reader(value, where)


def with_overrides(config: Config, overrides: tuple[tuple[str, object], ...]) -> Config:
    """`config` with the --config KEY=VALUE values in place of the file's, in the order given;
    `extend-exclude` adds to the patterns left out, `exclude` replaces them."""
    from rocmlint.records import replace

    for key, value in overrides:
        if key == "extend-exclude":
            config = replace(config, exclude=config.exclude + value)
        elif key == "rocm-version":
            config = replace(config, target=GpuTarget(value, config.target.archs))
        elif key == "arch":
            config = replace(config, target=GpuTarget(config.target.rocm_version, value))
        else:
            config = replace(config, **{_OVERRIDDEN_FIELDS[key]: value})
    return config
