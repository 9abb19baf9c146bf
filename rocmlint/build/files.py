"""What build, packaging and container files say, in one shape for the ROCM3xx checks.

Each kind of file is read with the parser made for it, never by running anything:

- CMake (`rocmlint.build.cmake`), Makefiles (`.makefile`), setup.py (`.setup_py`, with `ast`):
  the readers of the project model. They run the build as the ROCm build and as the CUDA
  build, and a statement only one of them reaches is gated (`BuildFacts.gate`). setup.py and
  the other Python modules that build extensions are turned into this shape by
  `rocmlint.build.python_build`.
- requirements/constraints files: pip's line format by hand (pip has no public API for it),
  each requirement parsed as PEP 508 by `packaging`.
- pyproject.toml: `tomllib` (`tomli` before Python 3.11); lines are found by the text.
- Dockerfiles: `dockerfile-parse` for the instructions (continuations, comments, ARG
  defaults); `RUN` bodies are shell.
- shell scripts, Dockerfile `RUN`, CI `run:` steps: tree-sitter's bash grammar (`.shell`).
- YAML (compose files, CI workflows, conda environment files): PyYAML's node tree, which keeps
  the position of every scalar.
- `.env` files: `NAME=value` lines.
- `uv.lock`: `tomllib` (`rocmlint.build.lockfiles`): the packages `uv sync` installs.

Everything comes out as tokens (words handed to a compiler, linker or tool), settings
(`NAME=value`), dependencies, conda channels, base images, local installs and locked packages,
each with its position in the file and the reason it is gated, if it is. The file itself is
gated when its name says which GPU stack it is for (`requirements/cuda.txt`, `Dockerfile.rocm`,
`environment-cuda.yml`, `docker/cuda/Dockerfile`), or when it is the default file beside a ROCm
one that does not include it (`Dockerfile` beside `Dockerfile.rocm`, `requirements.txt` beside
`requirements-rocm.txt`, `environment.yml` or `conda.yaml` beside `environment-rocm.yml` or
`conda-rocm.yaml`).
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache

from rocmlint.platforms import names_cuda, names_rocm
from rocmlint.files.tree import KeptAnswers


@dataclass(frozen=True)
class Token:
    """A word a build file hands to a compiler, linker, package manager or container tool."""

    text: str
    start: int
    end: int
    gate: str | None
    unit: int  # tokens of one command, line or list share a unit


@dataclass(frozen=True)
class Setting:
    """NAME=value: an environment variable, a build argument, a CMake or make variable."""

    name: str
    value: str
    start: int  # the span of the value (of the name when the value is empty)
    end: int
    gate: str | None
    kind: str  # "env", "arg", "cmake", "make"


@dataclass(frozen=True)
class Dependency:
    text: str  # as written
    name: str  # canonical (PEP 503) name
    specifier: str
    extras: frozenset[str]
    url: str | None
    start: int
    end: int
    gate: str | None
    conda: bool = False


@dataclass(frozen=True)
class Channel:
    """A conda channel an environment file or a `conda install -c` installs from."""

    name: str
    start: int
    end: int
    gate: str | None


@dataclass(frozen=True)
class Image:
    ref: str
    start: int
    end: int
    gate: str | None


@dataclass(frozen=True)
class LocalInstall:
    """`pip install -e .` / `pip install .`: the project in `directory` with its dependencies."""

    text: str
    directory: str  # absolute
    start: int
    end: int
    gate: str | None
    no_deps: bool


@dataclass
class BuildView:
    tokens: list[Token] = field(default_factory=list)
    settings: list[Setting] = field(default_factory=list)
    dependencies: list[Dependency] = field(default_factory=list)
    images: list[Image] = field(default_factory=list)
    installs: list[LocalInstall] = field(default_factory=list)
    channels: list[Channel] = field(default_factory=list)
    locked: list = field(default_factory=list)  # rocmlint.build.lockfiles.LockedPackage, for lock files
    cmake: list = field(default_factory=list)  # (Command, gate) for CMake files
    # Why the walk of the file's build was cut short (rocmlint.build.budget): its hits are
    # gated on nothing that build says, and the scan reports the file as not fully read.
    not_fully_read: str | None = None
    directory_changes: list[int] = field(default_factory=list)  # where shell code runs `cd`/`pushd`
    _unit: int = 0

    def next_unit(self) -> int:
        self._unit += 1
        return self._unit


# --- which GPU stack a file is for -----------------------------------------------------------

_CUDA_VERSION_WORD = re.compile(r"(?:^|[^a-z0-9])cu\d{2,3}(?:[^0-9]|$)", re.IGNORECASE)
_VENDOR_DIRECTORY = re.compile(r"(?:cuda|cu\d{2,3}|nvidia|rocm|hip|amd)(?:[-_.]?[\d.x]+)?", re.IGNORECASE)
_DEFAULT_NAMES = {"Dockerfile", "Containerfile", "requirements.txt", "environment.yml", "environment.yaml", "conda.yml",
                  "conda.yaml"}


# Platforms ROCm never runs on, or that a ROCm machine never installs for.
_OTHER_PLATFORM = re.compile(r"(?:^|[^a-z0-9])(cpu|xpu|tpu|hpu|neuron|s390x|ppc64le|macos|darwin|mps|metal|zen)(?:[^a-z0-9]|$)")


def stack_of_name(name: str) -> str | None:
    """"rocm" or "cuda" when a file or directory name says which GPU stack it is for, "other"
    when it names a platform that is neither (`requirements/xpu.txt`, `Dockerfile.s390x`)."""
    stem = name.lower()
    for suffix in (".txt", ".in", ".yml", ".yaml", ".dockerfile", ".sh", ".toml", ".env"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
    stem = stem.replace("dockerfile", " ").replace("containerfile", " ")
    rocm = names_rocm(stem)
    cuda = names_cuda(stem) or bool(_CUDA_VERSION_WORD.search(stem))
    if rocm == cuda:
        return "other" if not rocm and _OTHER_PLATFORM.search(stem) else None
    return "rocm" if rocm else "cuda"


def file_gate(path: str) -> str | None:
    """Why a whole build/packaging/container file belongs to one GPU stack, or None."""
    name = os.path.basename(path)
    stack = stack_of_name(name)
    if stack:
        return f"{_STACK_NAMES[stack]}-only file: its name `{name}` says so"
    absolute = os.path.abspath(path)
    directory = os.path.dirname(absolute)
    parent = os.path.basename(directory)
    if _VENDOR_DIRECTORY.fullmatch(parent or "") or (directory != project_directory(absolute) and stack_of_name(parent)):
        stack = stack_of_name(parent)
        if stack:
            return f"{_STACK_NAMES[stack]}-only file: it is in the `{parent}/` directory"
    vendored = _vendored(absolute)
    if vendored:
        return f"vendored code: under `{vendored}/`, another project's files that this project's build does not use"
    if name in _DEFAULT_NAMES:
        sibling = _rocm_sibling(os.path.abspath(path))
        if sibling:
            return f"the project keeps its ROCm variant beside it ({sibling}); this one is the other stack's"
    return None


_STACK_NAMES = {"rocm": "ROCm", "cuda": "CUDA", "other": "other-platform (neither ROCm nor CUDA)"}


def vendored_reason(path: str) -> str | None:
    vendored = _vendored(path)
    return f"vendored code: under `{vendored}/`, another project's files that this project's build does not use" if vendored else None


def _vendored(path: str) -> str | None:
    """The vendor directory (`third_party`, `3rdparty`, `vendor`, ...) a file sits under, below
    its project's root."""
    from rocmlint.build.project_root import VENDOR_DIRECTORIES
    from rocmlint.files.project_start import find_project_root

    root = find_project_root(os.path.dirname(path))
    if root is None:
        return None
    parts = os.path.relpath(path, root).replace(os.sep, "/").split("/")[:-1]
    for index, part in enumerate(parts):
        if part.lower() in VENDOR_DIRECTORIES:
            return "/".join(parts[: index + 1])
    return None


@lru_cache(maxsize=1024)
def _rocm_sibling(path: str) -> str | None:
    directory, name = os.path.split(path)
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return None
    kind = next((k for k in ("requirements", "environment", "conda") if name.startswith(k)), "docker")
    for other in names:
        if other == name or stack_of_name(other) != "rocm":
            continue
        lower = other.lower()
        if kind == "docker" and not ("dockerfile" in lower or "containerfile" in lower):
            continue
        if kind != "docker" and not lower.startswith(kind):
            continue
        if kind == "requirements" and _includes(os.path.join(directory, other), name):
            continue  # the ROCm requirements build on this file: it is shared
        return other
    return None


def _includes(requirements_path: str, name: str) -> bool:
    from rocmlint.files.tree import ProjectFiles

    text = ProjectFiles(os.path.dirname(requirements_path)).opened_text(requirements_path, 256 * 1024)
    if text is None:
        return False
    return re.search(r"(?m)^\s*(?:-r|--requirement|-c|--constraint)[\s=]+\S*" + re.escape(name) + r"\s*$", text) is not None


def join_gates(*gates: str | None) -> str | None:
    for gate in gates:
        if gate:
            return gate
    return None


# --- dependencies ------------------------------------------------------------------------------

_WHEEL_URL = re.compile(r"(?:^|/)([A-Za-z0-9_.]+)-([0-9][^-/]*)-[^/]*\.whl(?:$|[#?])")


def parse_dependency(text: str, start: int, end: int, gate: str | None) -> Dependency | None:
    """A PEP 508 requirement (or a direct wheel URL) as written; None when it is neither."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    text = text.strip()
    if not text:
        return None
    wheel = _WHEEL_URL.search(text)
    if "://" in text and "@" not in text.split("://", 1)[0]:
        if not wheel:
            return None
        name, version = wheel.group(1), wheel.group(2)
        return Dependency(text, canonicalize_name(name), f"=={version}", frozenset(), text, start, end, gate)
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return None
    marker = str(requirement.marker) if requirement.marker else ""
    extra = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", marker)
    if extra and (stack_of_name(extra.group(1)) or names_cuda(extra.group(1))):
        gate = gate or f"only with the optional extra `{extra.group(1)}`"
    specifier = str(requirement.specifier)
    if requirement.url and wheel:
        specifier = f"=={wheel.group(2)}"
    return Dependency(
        text, canonicalize_name(requirement.name), specifier, frozenset(e.lower() for e in requirement.extras),
        requirement.url, start, end, gate,
    )


# Extras named for an NVIDIA architecture or an NVIDIA-only library (`sm100`, `ptx`,
# `cutlass`, `tensorrt`): opt-in NVIDIA features, which is where the checks' fix-its put such
# dependencies (flashinfer's `sm107` and `ptx`).
_NVIDIA_FEATURE_EXTRA = re.compile(
    r"(?:^|[^a-z0-9])(sm_?\d{2,3}[a-z]?|ptx|cutlass|cute|cutedsl|nvshmem|tensorrt|trt|cudnn|nccl|hopper|blackwell)(?:[^a-z0-9]|$)"
)


def extra_gate(extra: str) -> str | None:
    stack = stack_of_name(extra)
    if stack:
        return f"only with the optional extra `{extra}`, which is for {_STACK_NAMES[stack]}"
    if _NVIDIA_FEATURE_EXTRA.search(extra.lower()):
        return f"only with the optional extra `{extra}`, which is for an NVIDIA-only feature"
    return None


# --- requirements files --------------------------------------------------------------------

_OPTION_WITH_VALUE = {"-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url", "-f",
                      "--find-links", "-e", "--editable", "--trusted-host", "--hash"}


def requirements_view(view: BuildView, source) -> None:
    gate = file_gate(source.path)
    text = source.text
    rocm_index = re.search(r"(?m)^\s*(?:-i|--index-url|--extra-index-url|-f|--find-links)[\s=]+(\S*rocm\S*)", text)
    if rocm_index and gate is None:
        gate = f"installed from the ROCm index {rocm_index.group(1)}"
    offset = 0
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        start = offset
        # pip joins lines that end in a backslash before it reads them.
        pieces = [(line, start)]
        offset += len(line) + 1
        while line.endswith("\\") and index + 1 < len(lines):
            index += 1
            line = lines[index]
            pieces.append((line, offset))
            offset += len(line) + 1
        index += 1
        _requirement_line(view, pieces, gate)


def _requirement_line(view: BuildView, pieces: list[tuple[str, int]], gate: str | None) -> None:
    unit = view.next_unit()
    words: list[tuple[str, int, int]] = []
    for text, base in pieces:
        code = re.split(r"(?:^|\s)#", text, maxsplit=1)[0]
        if code.endswith("\\"):
            code = code[:-1]
        for match in re.finditer(r"\S+", code):
            words.append((match.group(0), base + match.start(), base + match.end()))
    if not words:
        return
    for word, start, end in words:
        view.tokens.append(Token(word, start, end, gate, unit))
    if words[0][0].startswith("-"):
        if words[0][0] in ("-e", "--editable") and len(words) > 1:
            dependency = parse_dependency(words[1][0], words[1][1], words[1][2], gate)
            if dependency:
                view.dependencies.append(dependency)
        return
    # A requirement runs up to its first option (`--hash=...`, `--install-option`).
    kept = []
    for word in words:
        if word[0].startswith("--") or (word[0].startswith("-") and kept and not kept[-1][0].endswith((",", ";"))):
            break
        kept.append(word)
    if kept:
        text = " ".join(w[0] for w in kept)
        dependency = parse_dependency(text, kept[0][1], kept[-1][2], gate)
        if dependency:
            view.dependencies.append(dependency)


# --- pyproject.toml --------------------------------------------------------------------------


class _TextFinder:
    """Finds where a string value of a TOML or YAML document is written, in document order."""

    def __init__(self, text: str):
        self.text = text

    def find(self, value: str, after: int = 0) -> tuple[int, int] | None:
        for quote in ('"', "'"):
            needle = quote + value + quote
            at = self.text.find(needle, after)
            if at >= 0:
                return at + 1, at + 1 + len(value)
        at = self.text.find(value, after)
        return (at, at + len(value)) if at >= 0 else None


def toml_table(text: str) -> dict | None:
    """A TOML file's table, or None where it does not parse."""
    from rocmlint.config import toml_parser

    tomllib = toml_parser()
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return None


def pyproject_view(view: BuildView, source) -> None:
    data = toml_table(source.text)
    if data is None:
        return
    finder = _TextFinder(source.text)
    gate = file_gate(source.path)

    def key_offset(key: str) -> int:
        match = re.search(r"(?m)^\s*\"?" + re.escape(key) + r"\"?\s*=", source.text)
        return match.start() if match else 0

    def dependencies(values, key: str, extra: str | None = None) -> None:
        if not isinstance(values, list):
            return
        cursor = key_offset(key)
        for value in values:
            if not isinstance(value, str):
                continue
            where = finder.find(value, cursor)
            if where is None:
                continue
            cursor = where[1]
            dependency = parse_dependency(value, where[0], where[1], join_gates(gate, extra_gate(extra) if extra else None))
            if dependency:
                view.dependencies.append(dependency)

    project = data.get("project", {}) if isinstance(data.get("project"), dict) else {}
    dependencies(project.get("dependencies"), "dependencies")
    optional = project.get("optional-dependencies")
    if isinstance(optional, dict):
        for extra, values in optional.items():
            dependencies(values, extra, extra)
    build_system = data.get("build-system")
    if isinstance(build_system, dict):
        dependencies(build_system.get("requires"), "requires")
    groups = data.get("dependency-groups")
    if isinstance(groups, dict):
        for group, values in groups.items():
            dependencies(values, group, group)
    # Every other string (index URLs under [tool.uv], [tool.pdm], ...) is a token.
    strings: list[str] = []

    def collect(value) -> None:
        if isinstance(value, str):
            strings.append(value)
        elif isinstance(value, list):
            for item in value:
                collect(item)
        elif isinstance(value, dict):
            for item in value.values():
                collect(item)

    collect(data.get("tool", {}))
    for value in strings:
        if "://" not in value:
            continue
        where = finder.find(value)
        if where:
            view.tokens.append(Token(value, where[0], where[1], gate, view.next_unit()))


# --- CMake ---------------------------------------------------------------------------------

_CMAKE_SETTERS = {"set", "list", "string"}


def cmake_view(view: BuildView, source) -> None:
    from rocmlint.build.cmake import parse_cmake

    path = os.path.abspath(source.path)
    facts, view.not_fully_read = cmake_facts(path, source.text)
    vendored = vendored_reason(path)
    for command in parse_cmake(source.text):
        gate = join_gates(facts.gate((path, command.line)) if facts is not None else None, vendored)
        view.cmake.append((command, gate))
        unit = view.next_unit()
        for argument in command.arguments:
            if argument.start < 0:
                continue
            start, end = argument.start, argument.end
            if argument.kind == "quoted":
                start, end = start + 1, max(start + 1, end - 1)
            # A quoted argument often holds several flags: "${CMAKE_CUDA_FLAGS} -O3 -arch=sm_80".
            for word in re.finditer(r"\S+", source.text[start:end]):
                view.tokens.append(Token(word.group(0), start + word.start(), start + word.end(), gate, unit))
        _cmake_setting(view, command, gate, source.text)


def _cmake_setting(view: BuildView, command, gate: str | None, text: str) -> None:
    arguments = [a for a in command.arguments if a.start >= 0]
    name, values = None, []
    if command.name == "set" and arguments:
        name, values = arguments[0].text, arguments[1:]
        for index, argument in enumerate(values):
            if argument.kind == "unquoted" and argument.text in ("CACHE", "PARENT_SCOPE"):
                values = values[:index]
                break
    elif command.name == "list" and len(arguments) > 2 and arguments[0].text.upper() in ("APPEND", "PREPEND"):
        name, values = arguments[1].text, arguments[2:]
    elif command.name in ("set_target_properties", "set_property", "set_source_files_properties"):
        for index, argument in enumerate(arguments):
            if argument.text.endswith("_ARCHITECTURES") and argument.kind == "unquoted":
                name, values = argument.text, arguments[index + 1 : index + 2] if command.name != "set_property" else arguments[index + 1 :]
                break
    if not name or not values:
        return
    kind = "cmake"
    if name.startswith("ENV{") and name.endswith("}"):
        name, kind = name[4:-1], "env"
    value = ";".join(a.text for a in values)
    view.settings.append(Setting(name, value, values[0].start, values[-1].end, gate, kind))


def _cmake_entry(path: str) -> str:
    """The CMakeLists.txt a build starts from to reach `path`: the highest one above it in an
    unbroken chain of directories that have one."""
    directory = os.path.dirname(path)
    entry = path if os.path.basename(path) == "CMakeLists.txt" else None
    while True:
        candidate = os.path.join(directory, "CMakeLists.txt")
        if os.path.isfile(candidate):
            entry = candidate
        elif entry is not None:
            break
        parent = os.path.dirname(directory)
        if parent == directory or os.path.isdir(os.path.join(directory, ".git")):
            break
        directory = parent
    return entry or path


def within_budget(walk) -> tuple[object, str | None]:
    """(what a build reader's walk found, None) or (None, why it was cut short): None is
    unknown, no hit is gated on it, where the walk ran out of its budget or met a cap
    (rocmlint.build.budget) or raised on input it cannot read (said elsewhere: why is None).
    Each file of the per-file pass has a budget of its own."""
    from rocmlint.build.budget import OutOfBudget, WorkBudget

    budget = WorkBudget()
    try:
        facts = walk(budget)
    except OutOfBudget as exc:
        return None, str(exc)
    except (RecursionError, ValueError):
        return None, None
    limits = budget.take_limits()
    return (None, "; ".join(limits)) if limits else (facts, None)


# Walks of CMake builds: key -> (what the walk found, {each file it read: hash of the text read}).
_CMAKE_WALKS: dict[tuple, tuple[tuple[object, str | None], dict[str, int]]] = KeptAnswers()


def _cmake_walk(entry: str, path: str, text: str) -> tuple[object, str | None]:
    """Walk the CMake build from `entry`, reading `path` as `text` (the file being checked,
    which may not be on disk) and every other file from disk: (facts, None) or (None, why)."""
    from rocmlint.build.cmake import read_cmake
    from rocmlint.files.tree import ProjectFiles

    files = ProjectFiles(os.path.dirname(entry))  # nothing outside the build's folder, no pipe
    # A file checked as it is on disk (a scan, unlike an editor's unsaved buffer) is walked as
    # every other file of its build is: one walk from the entry serves them all, as long as the
    # walk read the file checked as it reads now (or did not read it).
    text_hash = hash(text)
    key = (entry,) if files.opened_text(path) == text else (entry, path, text_hash)
    kept = _CMAKE_WALKS.get(key)
    if kept is not None and kept[1].get(path, text_hash) == text_hash:
        return kept[0]
    hashes: dict[str, int] = {}

    def read(name: str) -> str | None:
        content = text if name == path else files.opened_text(name)
        if content is not None:
            hashes[name] = hash(content)
        return content

    walked = within_budget(lambda budget: read_cmake(os.path.dirname(entry), [entry], read, None, budget))
    if len(_CMAKE_WALKS) > 64:
        _CMAKE_WALKS.clear()
    _CMAKE_WALKS[key] = (walked, hashes)
    return walked


def cmake_facts(path: str, text: str) -> tuple[object, str | None]:
    """What the build that reaches a CMake file says about it, and why not (None, why): it
    cannot be read, or its walk was cut short. A file the project's build never reaches, or
    whose build cannot be walked from its entry, is read on its own."""
    entry = _cmake_entry(path)
    facts, why = _cmake_walk(entry, path, text) if os.path.isfile(entry) or entry == path else (None, None)
    if facts is not None and any(key[0] == path for world in facts.reached.values() for key in world):
        return facts, None
    return _cmake_walk(path, path, text) if entry != path else (facts, why)


# --- Makefiles -----------------------------------------------------------------------------

_MAKE_ASSIGNMENT = re.compile(r"^\s*(?:export\s+|override\s+)?([A-Za-z_][A-Za-z0-9_.]*)\s*(?::{1,3}=|\+=|\?=|!=|=)[ \t]*(.*)$")


def makefile_view(view: BuildView, source) -> None:
    from rocmlint.build.makefile import read_makefile

    path = os.path.abspath(source.path)
    facts, view.not_fully_read = within_budget(lambda budget: read_makefile(path, os.path.dirname(path), source.text, None, budget))
    logical_start = 1
    continued = False
    vendored = vendored_reason(path)
    for number, line in enumerate(source.lines, start=1):
        if not continued:
            logical_start = number
        continued = line.endswith("\\")
        gate = join_gates(facts.gate((path, logical_start)) if facts is not None else None, vendored)
        base = source.line_starts[number - 1]
        code = line if line.startswith("\t") else line.split("#", 1)[0]
        unit = view.next_unit()
        for match in re.finditer(r"\S+", code):
            view.tokens.append(Token(match.group(0), base + match.start(), base + match.end(), gate, unit))
        assignment = _MAKE_ASSIGNMENT.match(code) if number == logical_start and not line.startswith("\t") else None
        if assignment and assignment.group(2).strip():
            value = assignment.group(2).rstrip("\\ ")
            view.settings.append(Setting(assignment.group(1), value, base + assignment.start(2), base + assignment.start(2) + len(value), gate, "make"))


# --- shell, Dockerfiles, YAML, .env ----------------------------------------------------------

_PIP_PROGRAMS = {"pip", "pip3", "uv", "pipx"}


def shell_code(view: BuildView, shell_text: str, base_gate: str | None, path: str, gate_of=None) -> None:
    """Read shell code (`shell_text` has the file's length, blanked outside the code)."""
    from rocmlint.build.shell import ShellScript

    try:
        script = ShellScript(shell_text)
    except BaseException as exc:  # noqa: B036 - ast-grep panics are BaseExceptions
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return
    view.directory_changes.extend(c.start for c in script.commands if c.name in ("cd", "pushd"))
    for command in script.commands:
        gate = join_gates(base_gate, gate_of(command.start) if gate_of else None, command.gate)
        unit = view.next_unit()
        view.tokens.append(Token(command.name, command.start, command.start + len(command.name), gate, unit))
        for word in command.words:
            view.tokens.append(Token(word.text, word.start, word.end, gate, unit))
        for name, value in command.assignments:
            view.settings.append(Setting(name, value.text, value.start, value.end, gate, "env"))
        _pip_install(view, command, gate, path)
        _conda_install(view, command, gate)
    for assignment in script.assignments:
        gate = join_gates(base_gate, gate_of(assignment.start) if gate_of else None, assignment.gate)
        view.settings.append(Setting(assignment.name, assignment.value.text, assignment.value.start, assignment.value.end, gate, "env"))


def _pip_install(view: BuildView, command, gate: str | None, path: str) -> None:
    words = [w for w in command.words]
    texts = [w.text for w in words]
    program = os.path.basename(command.name)
    if program.startswith("python") and texts[:2] == ["-m", "pip"]:
        words, texts = words[2:], texts[2:]
    elif program == "uv" and texts[:1] == ["pip"]:
        words, texts = words[1:], texts[1:]
    elif program not in _PIP_PROGRAMS:
        return
    if not texts or texts[0] != "install":
        return
    words = words[1:]
    no_deps = "--no-deps" in texts
    rocm_index = next((t for t in texts if "://" in t and "rocm" in t.lower()), None)
    if rocm_index:
        # pip picks the ROCm build from a ROCm index (its local version sorts above PyPI's).
        gate = gate or f"installed from the ROCm index {rocm_index}"
    index = 0
    while index < len(words):
        word = words[index]
        text = word.text
        if text in ("-e", "--editable") and index + 1 < len(words):
            target = words[index + 1]
            _local_install(view, command, target, gate, path, no_deps, editable=True)
            index += 2
            continue
        if text.startswith("-"):
            if text in _OPTION_WITH_VALUE or text in ("--target", "-t", "--prefix", "--root", "--python", "--src"):
                index += 2
            else:
                index += 1
            continue
        if text.startswith((".", "/")) or text in (".",):
            _local_install(view, command, word, gate, path, no_deps, editable=False)
        elif "$" not in text:
            dependency = parse_dependency(text, word.start, word.end, gate)
            if dependency:
                view.dependencies.append(dependency)
        index += 1


# A conda match spec: `[channel::]name[ version[ build]]`, the version and build also written
# `name=1.2=build` or `name>=1.2`. The channel may be a label or a URL
# (`nvidia/label/cuda-12.1.0::cuda`, `https://conda.anaconda.org/nvidia::cuda-nvcc`).
_CONDA_SPEC = re.compile(r"^(?:(\S+?)::)?([A-Za-z0-9_.-]+)\s*(.*)$")


def parse_conda_spec(spec: str) -> tuple[str | None, str, str] | None:
    """(channel or None, name, the rest: version and build) of a conda match spec."""
    match = _CONDA_SPEC.match(spec.strip())
    if not match:
        return None
    return match.group(1), match.group(2), match.group(3).strip()


_CONDA_PROGRAMS = {"conda", "mamba", "micromamba"}
# Options of `conda install`/`conda create` that take a value (the value is not a package).
_CONDA_OPTION_WITH_VALUE = {"-n", "--name", "-p", "--prefix", "-f", "--file", "--repodata-fn", "--experimental",
                            "--solver", "--platform", "--subdir", "--channel-priority", "--clone", "--root-prefix",
                            "-r", "--rc-file"}
_CONDA_CHANNEL_OPTIONS = {"-c", "--channel"}


def _conda_install(view: BuildView, command, gate: str | None) -> None:
    """`conda install` / `conda create` / `mamba install` / `micromamba create`: the packages
    (as conda dependencies) and the `-c` channels they come from."""
    from packaging.utils import canonicalize_name

    if os.path.basename(command.name) not in _CONDA_PROGRAMS:
        return
    words = list(command.words)
    if not words or words[0].text not in ("install", "create"):
        return
    index = 1
    while index < len(words):
        word = words[index]
        text = word.text
        if text in _CONDA_CHANNEL_OPTIONS and index + 1 < len(words):
            channel = words[index + 1]
            view.channels.append(Channel(channel.text, channel.start, channel.end, gate))
            index += 2
            continue
        if text.startswith(("--channel=", "-c=")):
            value = text.split("=", 1)[1]
            view.channels.append(Channel(value, word.end - len(value), word.end, gate))
        elif text in _CONDA_OPTION_WITH_VALUE:
            index += 2
            continue
        elif not text.startswith("-") and "$" not in text:
            spec = parse_conda_spec(text)
            if spec is not None:
                channel, name, specifier = spec
                view.dependencies.append(
                    Dependency(text, canonicalize_name(name), specifier, frozenset(), channel, word.start, word.end, gate, conda=True)
                )
        index += 1


def _local_install(view: BuildView, command, target, gate, path: str, no_deps: bool, editable: bool) -> None:
    text = target.text.split("[", 1)[0]
    if "://" in text or "$" in text or not (text.startswith((".", "/")) or text == "."):
        return
    if any(start < command.start for start in view.directory_changes):
        return  # a `cd` ran before: which project `.` is cannot be known from here
    base = project_directory(path)
    directory = os.path.normpath(os.path.join(base, text)) if not os.path.isabs(text) else text
    shown = f"pip install {'-e ' if editable else ''}{target.text}"
    view.installs.append(LocalInstall(shown, directory, command.start, command.end, gate, no_deps))


@lru_cache(maxsize=256)
def project_directory(path: str) -> str:
    """The Python project a script or Dockerfile installs with `pip install .`: the nearest
    directory above it that has a pyproject.toml or setup.py."""
    directory = os.path.dirname(os.path.abspath(path))
    current = directory
    while True:
        if os.path.isfile(os.path.join(current, "pyproject.toml")) or os.path.isfile(os.path.join(current, "setup.py")):
            return current
        parent = os.path.dirname(current)
        if parent == current or os.path.isdir(os.path.join(current, ".git")):
            return directory
        current = parent


def blank_outside(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with everything outside `spans` turned into spaces (line ends kept)."""
    blank = "\n".join(" " * len(line) for line in text.split("\n"))  # as long as `text`
    pieces, done = [], 0
    for start, end in sorted((max(0, s), min(len(text), e)) for s, e in spans if e > s):
        if end <= done:
            continue
        start = max(start, done)
        pieces += [blank[done:start], text[start:end]]
        done = end
    pieces.append(blank[done:])
    return "".join(pieces)


def shell_view(view: BuildView, source) -> None:
    shell_code(view, source.text, file_gate(source.path), source.path)


def dotenv_view(view: BuildView, source) -> None:
    gate = file_gate(source.path)
    for number, line in enumerate(source.lines, start=1):
        match = re.match(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$", line)
        if not match or line.lstrip().startswith("#"):
            continue
        base = source.line_starts[number - 1]
        value, start = match.group(2), base + match.start(2)
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value, start = value[1:-1], start + 1
        view.settings.append(Setting(match.group(1), value, start, start + len(value), gate, "env"))
