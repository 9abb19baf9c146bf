"""Load and validate the check catalog: one YAML file per check in ``checks/``.

The catalog ships inside the package as ``rocmlint.checks``. Every field of a check file is
typed here; an unknown key, a wrong type or a missing field is an error that names the file
and the key, because PyYAML silently turns ``on``/``off``/``no`` into booleans and a typo'd
key would otherwise be ignored.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from rocmlint import __version__
from rocmlint.findings import CHECK_ID
from rocmlint.records import field, record

LANGUAGES = ("python", "cpp", "cmake", "make", "dockerfile", "shell", "requirements", "pyproject", "yaml", "dotenv", "uvlock")
SEVERITIES = ("error", "warning", "note")
PRECISIONS = ("very-high", "high", "medium", "low")
SAFETIES = ("safe", "unsafe")
MATCHER_KINDS = ("python", "ast-grep", "text", "function")

NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class CheckFileError(ValueError):
    """A check file does not follow the schema."""


# --- the schema -----------------------------------------------------------------------------
# A field spec is (type, required). Types: str, int, bool, "str-list", "int-list", a tuple of
# allowed strings (enum), a dict (nested mapping spec), ("list-of", dict) or "any-mapping"
# (free-form, validated by the matcher that owns it).

EXAMPLE_INVALID = {
    "code": (str, True),
    "lines": ("int-list", True),
    "fixed": (str, False),
    "file": (str, False),
    "note": (str, False),
}
EXAMPLE_VALID = {
    "code": (str, True),
    "file": (str, False),
    "note": (str, False),
}
REWRITE = {
    "capture": (str, False),
    "template": (str, True),
    "safety": (SAFETIES, True),
    "note": (str, True),
    "rocm-from": (str, False),  # offered only where the configured ROCm is this release or newer
}
OLDER_ROCM = {"before": (str, True), "title": (str, True), "snippet": (str, True)}
FIX = {
    "title": (str, True),
    "snippet": (str, True),
    "rewrite": (REWRITE, False),
    "runtime": (str, False),
    # the fix for a configured ROCm release older than `before`, where the snippet's form fails
    "older-rocm": (OLDER_ROCM, False),
}
# How a project's HIP shim header gates a check's hits on an intrinsic call: a shim that
# redefines the intrinsic without its mask argument, or any AMD-side definition of it.
SHIM_GATES = ("mask-dropping", "any-definition", "cuda-runtime")
# The cases in which a matcher says a hit with another message than the check's `message`
# (`message-when`): "no-wave-site", a 32-lane hit of a `context: wavefront` matcher that meets
# no whole-wavefront site (rocmlint.cpp.wave), reported where the project has no AMD side.
MESSAGE_VARIANTS = ("no-wave-site",)
TARGET_FACTS = ("fp8", "wave-size", "tf32", "family")
TARGET = {
    "fact": (TARGET_FACTS, False),
    "affected": ("str-list", False),
    "default": (str, False),
    "rocm-from": (str, False),
    "rocm-before": (str, False),
}
# Precision measured by hand triage of random samples of whole-tree findings (docs/precision.md):
# [true, decided] per kind of project (one that builds for AMD already, one NVIDIA-only).
MEASURED = {
    "amd": ("int-list", False),
    "nvidia": ("int-list", False),
    "sample": (str, True),
}
PROJECT_KINDS = frozenset({"amd", "nvidia"})
PROJECT_KIND_NAMES = {"amd": "projects that build for AMD", "nvidia": "NVIDIA-only projects"}
SCHEMA = {
    "id": (str, True),
    "name": (str, True),
    "title": (str, True),
    "languages": ("lang-list", True),
    "severity": (SEVERITIES, True),
    "precision": (PRECISIONS, True),
    "measured": (MEASURED, False),
    "enabled-by-default": (bool, False),
    "tags": ("str-list", True),
    "markers": ("str-list", True),
    "python-file-names": ("str-list", False),
    "python-build-helpers": (bool, False),
    "message": (str, True),
    "message-when": ("any-mapping", False),
    "description": (str, True),
    "rationale": (str, True),
    "match": ("any-mapping", True),
    "gated": (bool, False),
    "shim-gated": (SHIM_GATES, False),
    "check-amd-side": (bool, False),
    "hip-only": (bool, False),
    "hipify-gated": ("bool-or-regex", False),
    "project-macro-gate": ("str-list", False),
    "amd-only-gated": (bool, False),
    "breaks-nvidia": (bool, False),
    "cuda-build": (bool, False),
    "target": (TARGET, False),
    "fix": (FIX, True),
    "references": ("str-list", True),
    "examples": ({"invalid": (("list-of", EXAMPLE_INVALID), True), "valid": (("list-of", EXAMPLE_VALID), True)}, True),
}


def _type_name(kind: Any) -> str:
    if kind is str:
        return "a string"
    if kind is int:
        return "an integer"
    if kind is bool:
        return "true or false"
    if isinstance(kind, tuple) and kind and kind[0] == "list-of":
        return "a list of mappings"
    if isinstance(kind, tuple):
        return "one of " + ", ".join(kind)
    if isinstance(kind, dict) or kind == "any-mapping":
        return "a mapping"
    if kind == "bool-or-regex":
        return "true, false or a regular expression"
    return {"str-list": "a list of strings", "int-list": "a list of integers",
            "lang-list": "a list of languages (" + ", ".join(LANGUAGES) + ")"}[kind]


def _validate(value: Any, spec: dict, where: str, source: str) -> None:
    if not isinstance(value, dict):
        raise CheckFileError(f"{source}: {where or 'the file'} must be a mapping")
    for key in value:
        if key not in spec:
            known = ", ".join(spec)
            raise CheckFileError(f"{source}: unknown key {where + '.' if where else ''}{key!s} (known keys: {known})")
    for key, (kind, required) in spec.items():
        path = f"{where}.{key}" if where else key
        if key not in value:
            if required:
                raise CheckFileError(f"{source}: missing key {path}")
            continue
        _validate_value(value[key], kind, path, source)


def _validate_value(item: Any, kind: Any, path: str, source: str) -> None:
    def bad() -> CheckFileError:  # built only when raised: the repr of a long value costs
        return CheckFileError(f"{source}: {path} must be {_type_name(kind)}, got {item!r}")

    if kind is str:
        if not isinstance(item, str) or not item.strip():
            raise bad()
    elif kind is int:
        if not isinstance(item, int) or isinstance(item, bool):
            raise bad()
    elif kind is bool:
        if not isinstance(item, bool):
            raise bad()
    elif kind == "bool-or-regex":
        if isinstance(item, str) and item.strip():
            try:
                re.compile(item)
            except re.error as exc:
                raise CheckFileError(f"{source}: {path}: {exc}") from exc
        elif not isinstance(item, bool):
            raise bad()
    elif kind in ("str-list", "lang-list"):
        if not isinstance(item, list) or not item or not all(isinstance(x, str) and x for x in item):
            raise bad()
        if kind == "lang-list" and any(x not in LANGUAGES for x in item):
            raise bad()
    elif kind == "int-list":
        if not isinstance(item, list) or not item or not all(isinstance(x, int) and not isinstance(x, bool) for x in item):
            raise bad()
    elif kind == "any-mapping":
        if not isinstance(item, dict):
            raise bad()
    elif isinstance(kind, tuple) and kind and kind[0] == "list-of":
        if not isinstance(item, list) or not item:
            raise bad()
        for i, element in enumerate(item):
            _validate(element, kind[1], f"{path}[{i}]", source)
    elif isinstance(kind, tuple):
        if item not in kind:
            raise bad()
    elif isinstance(kind, dict):
        _validate(item, kind, path, source)
    else:  # pragma: no cover - a schema bug, not a user error
        raise AssertionError(f"unknown schema kind {kind!r}")


# --- the loaded form ------------------------------------------------------------------------


@record
class InvalidExample:
    code: str
    lines: tuple[int, ...]
    fixed: str | None
    file: str | None
    note: str | None


@record
class ValidExample:
    code: str
    file: str | None
    note: str | None


@record
class Rewrite:
    capture: str | None  # the capture whose text is replaced; None = the whole match
    template: str
    safety: str
    note: str
    rocm_from: tuple[int, ...] | None = None


@record
class OlderRocmFix:
    before: tuple[int, ...]
    title: str
    snippet: str


@record
class FixIt:
    title: str
    snippet: str
    rewrite: Rewrite | None
    runtime: str | None
    older_rocm: OlderRocmFix | None = None

    def for_rocm(self, rocm_version: tuple[int, ...] | None) -> tuple[str, str]:
        """(title, snippet) for the configured ROCm release (None: not configured)."""
        if self.older_rocm is not None and rocm_version is not None and rocm_version < self.older_rocm.before:
            return self.older_rocm.title, self.older_rocm.snippet
        return self.title, self.snippet


@record
class TargetSpec:
    """How a check's truth depends on the configured target (`[tool.rocmlint] arch`,
    `rocm-version`): it holds on GPUs whose `fact` (rocmlint.catalog.arch_facts) is one of `affected`,
    and for ROCm releases from `rocm_from` and before `rocm_before`. `default` names the
    affected GPUs in the message ($TARGETS) when no arch is configured."""

    fact: str | None
    affected: tuple[str, ...]
    default: str | None
    rocm_from: tuple[int, ...] | None
    rocm_before: tuple[int, ...] | None


@record
class Check:
    id: str
    name: str
    title: str
    languages: tuple[str, ...]
    severity: str
    precision: str
    enabled_by_default: bool
    tags: tuple[str, ...]
    markers: tuple[str, ...]
    message: str
    description: str
    rationale: str
    matcher_kind: str
    matcher_spec: dict = field(hash=False, compare=False)
    gated: bool = True
    # A call of a warp intrinsic that the project's HIP shim redefines without its mask is not
    # a finding (the mask never reaches HIP): see rocmlint.project.
    shim_gated: str | None = None  # one of SHIM_GATES
    # The AMD side of a stack test (`#ifdef USE_ROCM` ... `#else`) is code HIP compiles: a check
    # about mistakes that side can make too (a 32-bit mask) reads it instead of taking it as gated.
    check_amd_side: bool = False
    # The check's claim holds only of code HIP alone compiles (the AMD side of a stack test, a
    # .hip file, a file only the project's ROCm build compiles): elsewhere nvcc compiles the line
    # as well, which shows the claim does not apply (rocmlint.cpp.gates.NVCC_COMPILES_IT).
    hip_only: bool = False
    # Hits in files the ROCm build hipifies are gated: all (True), or those whose flagged text
    # matches this regular expression (what hipify rewrites).
    hipify_gated: bool | str = False
    # Hits in a project that builds for AMD only are gated: what the check flags means
    # something else only in code carried over from CUDA.
    amd_only_gated: bool = False
    # The hazard is on NVIDIA (ROCm-only code that an NVIDIA run reaches): a Python hit is gated
    # where its code never runs on NVIDIA, decided by what the module imports and who imports it
    # (rocmlint.project.python_imports), never by the module's name.
    breaks_nvidia: bool = False
    # The check is about code the project's CUDA build compiles (ROCm-only code that breaks it):
    # the project pass gates hits in files the CUDA build never reads, instead of those the ROCm
    # build never reads.
    cuda_build: bool = False
    # Hits are gated where the project itself defines one of these macros for HIP (a shim
    # header that defines __CUDA_ARCH__ makes `#if __CUDA_ARCH__` tests mean something there).
    project_macro_gate: tuple[str, ...] = ()
    target: TargetSpec | None = None
    fix: FixIt | None = None
    references: tuple[str, ...] = ()
    invalid_examples: tuple[InvalidExample, ...] = ()
    valid_examples: tuple[ValidExample, ...] = ()
    source: str = ""
    # (kind of project, true, decided) from hand triage: see MEASURED.
    measured: tuple[tuple[str, int, int], ...] = ()
    # The Python files the check reads, by file name (empty: all of them). The build checks
    # read only setup.py: without this, every `.py` file holding a marker such as "torch"
    # would be parsed for them and then yield nothing.
    python_file_names: tuple[str, ...] = ()
    # Also the Python modules that build native code besides setup.py (rocmlint.build.view:
    # they import torch.utils.cpp_extension, setuptools, ... or run nvcc/hipcc).
    python_build_helpers: bool = False
    # Other messages for some hits, by the case the matcher names (`message-when`; MESSAGE_VARIANTS).
    message_when: dict = field(default_factory=dict, hash=False, compare=False)

    @property
    def preview_kinds(self) -> frozenset[str]:
        """The kinds of project where the check is in preview (runs only when preview is on):
        those it was measured right less than 9 times in 10 on. "amd": projects that build or
        run for AMD GPUs already; "nvidia": projects with no AMD side, being ported
        (rocmlint.build.project_root.project_kind)."""
        return frozenset(kind for kind, true, decided in self.measured if decided and 10 * true < 9 * decided)

    @property
    def preview(self) -> bool:
        """In preview on every kind of project: without preview it runs nowhere."""
        return self.preview_kinds == PROJECT_KINDS

    def measured_text(self) -> str | None:
        """"projects that build for AMD 14/15, NVIDIA-only projects 9/15", or None when unmeasured."""
        if not self.measured:
            return None
        return ", ".join(f"{PROJECT_KIND_NAMES[kind]} {true}/{decided}" for kind, true, decided in self.measured)

    @property
    def fixable(self) -> bool:
        return self.fix is not None and self.fix.rewrite is not None

    def reads(self, language: str, path: str) -> bool:
        """Whether the check looks at a file of this language and path at all."""
        if language not in self.languages:
            return False
        if language != "python" or not self.python_file_names or os.path.basename(path) in self.python_file_names:
            return True
        return self.python_build_helpers


def parse_check(data: Any, source: str, validate: bool = True) -> Check:
    """Validate one check file's data and build a Check. `source` names the file in errors.
    `validate=False` only for data that was validated when it was kept (load_catalog)."""
    if validate:
        _validate(data, SCHEMA, "", source)
    if not CHECK_ID.match(data["id"]):
        raise CheckFileError(f"{source}: id must look like ROCM001, got {data['id']!r}")
    if not NAME_RE.match(data["name"]):
        raise CheckFileError(f"{source}: name must be lower-case words joined by '-', got {data['name']!r}")
    if "\n" in data["message"].strip():
        raise CheckFileError(f"{source}: message must be one line")
    for key in ("python-file-names", "python-build-helpers"):
        if key in data and "python" not in data["languages"]:
            raise CheckFileError(f"{source}: {key} is only for a check whose languages include python")
    message_when = data.get("message-when", {})
    for variant, text in message_when.items():
        if variant not in MESSAGE_VARIANTS:
            raise CheckFileError(f"{source}: message-when.{variant}: unknown (known: {', '.join(MESSAGE_VARIANTS)})")
        if not isinstance(text, str) or not text.strip() or "\n" in text.strip():
            raise CheckFileError(f"{source}: message-when.{variant} must be one line of text")
    match = data["match"]
    if len(match) != 1 or next(iter(match)) not in MATCHER_KINDS:
        raise CheckFileError(
            f"{source}: match must have exactly one of {', '.join(MATCHER_KINDS)}, got {', '.join(map(str, match)) or 'nothing'}"
        )
    kind, spec = next(iter(match.items()))
    if not isinstance(spec, dict):
        raise CheckFileError(f"{source}: match.{kind} must be a mapping")
    if kind == "ast-grep" and spec.get("context") == "wavefront" and "no-wave-site" not in message_when:
        raise CheckFileError(f"{source}: a `context: wavefront` check needs message-when.no-wave-site")
    fix = data["fix"]
    rewrite = fix.get("rewrite")
    target = _target_spec(data.get("target"), source)
    measured = tuple(_measured(data.get("measured"), source))
    examples = data["examples"]
    return Check(
        id=data["id"],
        name=data["name"],
        title=data["title"],
        languages=tuple(data["languages"]),
        severity=data["severity"],
        precision=data["precision"],
        enabled_by_default=data.get("enabled-by-default", True),
        tags=tuple(data["tags"]),
        markers=tuple(data["markers"]),
        message=data["message"].strip(),
        message_when={variant: text.strip() for variant, text in message_when.items()},
        description=data["description"].strip(),
        rationale=data["rationale"].strip(),
        matcher_kind=kind,
        matcher_spec=spec,
        gated=data.get("gated", True),
        shim_gated=data.get("shim-gated"),
        check_amd_side=data.get("check-amd-side", False),
        hip_only=data.get("hip-only", False),
        hipify_gated=data.get("hipify-gated", False),
        amd_only_gated=data.get("amd-only-gated", False),
        breaks_nvidia=data.get("breaks-nvidia", False),
        cuda_build=data.get("cuda-build", False),
        project_macro_gate=tuple(data.get("project-macro-gate", ())),
        python_file_names=tuple(data.get("python-file-names", ())),
        python_build_helpers=data.get("python-build-helpers", False),
        measured=measured,
        target=target,
        fix=FixIt(
            title=fix["title"],
            snippet=fix["snippet"],
            rewrite=Rewrite(
                rewrite.get("capture"), rewrite["template"], rewrite["safety"], rewrite["note"].strip(),
                _version(rewrite.get("rocm-from"), f"{source}: fix.rewrite.rocm-from"),
            )
            if rewrite
            else None,
            runtime=fix.get("runtime"),
            older_rocm=OlderRocmFix(
                _version(fix["older-rocm"]["before"], f"{source}: fix.older-rocm.before"),
                fix["older-rocm"]["title"],
                fix["older-rocm"]["snippet"],
            )
            if "older-rocm" in fix
            else None,
        ),
        references=tuple(data["references"]),
        invalid_examples=tuple(
            InvalidExample(e["code"], tuple(e["lines"]), e.get("fixed"), e.get("file"), e.get("note"))
            for e in examples["invalid"]
        ),
        valid_examples=tuple(ValidExample(e["code"], e.get("file"), e.get("note")) for e in examples["valid"]),
        source=source,
    )


def _measured(data: dict | None, source: str):
    """(kind, true, decided) for each kind of project measured."""
    for kind in ("amd", "nvidia"):
        counts = (data or {}).get(kind)
        if counts is None:
            continue
        if len(counts) != 2 or not 0 <= counts[0] <= counts[1]:
            raise CheckFileError(f"{source}: measured.{kind} must be [true, decided] with 0 <= true <= decided, got {counts!r}")
        yield kind, counts[0], counts[1]


def _version(text: str | None, where: str) -> tuple[int, ...] | None:
    if text is None:
        return None
    from rocmlint.catalog.arch_facts import parse_rocm_release

    try:
        return parse_rocm_release(text, where)
    except ValueError as exc:
        raise CheckFileError(str(exc)) from exc


def _target_spec(data: dict | None, source: str) -> TargetSpec | None:
    if data is None:
        return None
    from rocmlint.catalog.arch_facts import parse_rocm_release

    fact = data.get("fact")
    if fact is not None and ("affected" not in data or "default" not in data):
        raise CheckFileError(f"{source}: target.fact needs target.affected and target.default")
    if fact is None and ("affected" in data or "default" in data):
        raise CheckFileError(f"{source}: target.affected and target.default need target.fact")
    versions = {}
    for key in ("rocm-from", "rocm-before"):
        if key in data:
            try:
                versions[key] = parse_rocm_release(data[key], f"{source}: target.{key}")
            except ValueError as exc:
                raise CheckFileError(str(exc)) from exc
    if not fact and not versions:
        raise CheckFileError(f"{source}: target needs fact or rocm-from/rocm-before")
    if "$TARGETS" in data.get("default", ""):
        raise CheckFileError(f"{source}: target.default cannot name $TARGETS")
    return TargetSpec(fact, tuple(data.get("affected", ())), data.get("default"), versions.get("rocm-from"), versions.get("rocm-before"))


def _yaml_data(name: str, text: str):
    import yaml  # here: a start-up that finds the parsed catalog kept (see _catalog_data) needs no YAML

    try:
        # libyaml's loader when PyYAML has it: ten times faster, and every flake8 run loads the catalog.
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise CheckFileError(f"{name}: not valid YAML: {exc}") from exc


def load_check_file(path: Path) -> Check:
    return _check_of(path.name, _yaml_data(path.name, path.read_text(encoding="utf-8")), validate=True)


def _check_of(name: str, data, validate: bool) -> Check:
    check = parse_check(data, name, validate)
    expected = f"{check.id}-{check.name}.yaml"
    if name != expected:
        raise CheckFileError(f"{name}: file name must be {expected} (id and name fields)")
    return check


def catalog_files() -> list[Path]:
    # The check files sit beside the package's __init__.py (installed as plain files: see
    # pyproject.toml); importlib.resources would find them too, at the cost of importing its
    # machinery on every start.
    import rocmlint.checks

    root = os.path.dirname(os.path.abspath(rocmlint.checks.__file__))
    return sorted(Path(root, name) for name in os.listdir(root) if name.endswith(".yaml"))


def _kept_catalog_path(root: str) -> str | None:
    """Where the parsed catalog is kept as JSON: a file in the user's cache folder named by
    rocmlint's version and the check folder, so that two installations do not take turns
    rewriting one file. None when there is no home folder."""
    import zlib

    folder = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(folder):
        return None
    where = zlib.crc32(os.fsencode(root))
    return os.path.join(folder, "rocmlint", f"catalog-{__version__}-{where:08x}.json")


def _catalog_stamp(paths: list[Path]) -> list[list]:
    """Name, size and modification time of each check file: what the kept catalog must match.
    An edit that keeps both a file's size and its modification time is not noticed (as with
    make); anything else is parsed again."""
    stamp = []
    for path in paths:
        status = path.stat()
        stamp.append([path.name, status.st_size, status.st_mtime_ns])
    return stamp


def _kept_catalog_data(kept: str | None, stamp: list[list]) -> list[tuple[str, Any]] | None:
    """(file name, parsed YAML) of each check file from the kept copy, or None when there is
    none or it is damaged or stale."""
    import json

    if kept is None:
        return None
    try:
        with open(kept, encoding="utf-8") as handle:
            stored = json.load(handle)
        if stored["stamp"] == stamp:
            return [(name, value) for name, value in stored["checks"]]
    except (OSError, ValueError, TypeError, KeyError):
        pass
    return None


def _keep_catalog_data(kept: str | None, stamp: list[list], parsed: list[tuple[str, Any]]) -> None:
    """Keep the parsed, validated catalog for the next start. A copy that cannot be written
    changes nothing but the time."""
    import json

    if kept is None:
        return
    try:
        checks = [list(item) for item in parsed]
        encoded = json.dumps({"stamp": stamp, "checks": checks})
        # Only data JSON gives back unchanged (YAML dates or integer keys would not be).
        if json.loads(encoded)["checks"] != checks:
            return
        from rocmlint.files.result_cache import write_by_rename

        os.makedirs(os.path.dirname(kept), exist_ok=True)
        write_by_rename(kept, encoded, prefix=".tmp-catalog-")
    except (OSError, TypeError, ValueError):
        pass


def _catalog_of(data: list[tuple[str, Any]], validate: bool) -> tuple[Check, ...]:
    checks: dict[str, Check] = {}
    for name, item in data:
        check = _check_of(name, item, validate)
        if check.id in checks:
            raise CheckFileError(f"{name}: id {check.id} is already used by {checks[check.id].source}")
        checks[check.id] = check
    return tuple(checks[k] for k in sorted(checks))


@lru_cache(maxsize=1)
def load_catalog() -> tuple[Check, ...]:
    """Every check shipped with rocmlint, validated, sorted by id. Duplicate ids are an error.

    Parsing YAML was most of rocmlint's start-up (and of each flake8 run's cost), so the parsed
    catalog is kept as JSON once it has been validated; a start that finds it, matching the
    check files on disk, builds the checks from it without parsing or validating again."""
    paths = catalog_files()
    kept = _kept_catalog_path(str(paths[0].parent)) if paths else None
    stamp = _catalog_stamp(paths)
    data = _kept_catalog_data(kept, stamp)
    if data is not None and [name for name, _ in data] == [path.name for path in paths]:
        try:
            return _catalog_of(data, validate=False)
        except (CheckFileError, KeyError, TypeError, ValueError, AttributeError):
            pass  # a kept copy edited by hand: parse the check files again
    data = [(path.name, _yaml_data(path.name, path.read_text(encoding="utf-8"))) for path in paths]
    catalog = _catalog_of(data, validate=True)
    _keep_catalog_data(kept, stamp, data)
    return catalog


def check_by_id(check_id: str) -> Check | None:
    for check in load_catalog():
        if check.id == check_id.upper():
            return check
    return None
