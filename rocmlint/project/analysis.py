"""The C/C++ half of the project model: include closure, project macros and HIP shims.

Starting from the files the ROCm build compiles (and every source no build names, since
unknown means both), follow the `#include` lines that HIP-Clang would read, under a table of
what is known about macros in the ROCm build: HIP's platform macro, what the ROCm build
defines on the command line, and NVIDIA-only compiler macros. Then:

- a project macro used in some `#if` whose every definition is in a branch HIP-Clang never
  compiles, or in a file only the CUDA build reaches, is undefined under HIP (PTX_AVAILABLE);
  so is a macro only the CUDA build defines on its command line;
- a compiler macro the project itself defines where HIP reads it (`#define __CUDA_ARCH__`
  in a HIP shim header) is no longer known to be undefined;
- a macro defined only inside branches that test the GPU stack is a platform macro (BNB_HIP);
- a header no ROCm-compiled file includes, but a CUDA-only one does (or one includes it in a
  branch HIP-Clang never compiles), is CUDA-only;
- a function-like macro redefining a CUDA warp intrinsic without its mask, in a HIP branch or a
  header only included from HIP branches, is a HIP shim for every file that includes it.
Learning a macro can change what is read, so this runs until nothing changes (a few rounds).
Macro facts apply within the group of files connected to a definition by includes.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from functools import partial

from rocmlint.build import CUDA, ROCM, BuildFacts
from rocmlint.cpp.cuda_api import RUNTIME_NAME
from rocmlint.cpp.preprocessor import NVIDIA_COMPILER_ONLY, ConditionUnderHip, MacroFact, MacroTable, nvidia_side_table
from rocmlint.project.model import (
    _HEADER_SUFFIXES,
    _HIP_BUILD_MACROS,
    _TORCH_EXTENSION_MACROS,
    _DEVICE_INTRINSIC,
    _WARP_INTRINSIC,
    FileVerdict,
    Overrides,
    ProjectModel,
    Shim,
    vendored_directory,
)
from rocmlint.project.includes import Definition, ProjectSources, parse_definition

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ROUNDS = 4
_CONDITION_KEYWORDS = ("if", "elif", "ifdef", "ifndef", "elifdef", "elifndef")


def _number(text: str | None) -> int | None:
    if text is None or text == "":
        return 1  # `-DNAME` defines NAME as 1
    try:
        return int(text.rstrip("uUlL"), 0)
    except ValueError:
        return None


class _UnionFind:
    def __init__(self):
        self.parent: dict[str, str] = {}

    def find(self, item: str) -> str:
        parent = self.parent.setdefault(item, item)
        while parent != self.parent.setdefault(parent, parent):
            self.parent[item] = self.parent[parent]
            item, parent = parent, self.parent[parent]
        return parent

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def analyse_sources(model: ProjectModel, facts: BuildFacts, sources: list[str], overrides: Overrides | None, known=None) -> None:
    index = ProjectSources(sources, model.read_text, known)
    model.sources = index
    include_dirs = sorted(facts.include_dirs)
    torch_extension = any(
        os.path.basename(p) == "setup.py" and "cpp_extension" in (model.read_text(p) or "") for p in facts.files_read
    )
    base: dict[str, MacroFact] = {name: MacroFact(True, value) for name, value in _HIP_BUILD_MACROS.items()}
    if torch_extension:
        base.update({name: MacroFact(True, value) for name, value in _TORCH_EXTENSION_MACROS.items()})
    for name, (value, _) in facts.defines[ROCM].items():
        base[name] = MacroFact(True, _number(value))

    # Files the ROCm build never compiles: by the build files, or declared in the configuration.
    cuda_only = {p for p, v in model.verdicts.items() if v.compiled_for == "cuda"}
    if overrides is not None and overrides.cuda_only:
        for path in sources:
            if overrides.cuda_only(path) and not (overrides.rocm_sources and overrides.rocm_sources(path)):
                cuda_only.add(path)
                model.verdicts[path] = FileVerdict("cuda", f"CUDA-only: declared in {overrides.where} cuda-only", "declared CUDA-only")
    # What the ROCm build starts from: every source it compiles, and every source of the
    # project's own that no build names (unknown means both). Vendored code (a submodule,
    # third_party/...) counts only where a build compiles it or a ROCm-read file includes it.

    def is_root(path: str) -> bool:
        verdict = model.verdicts.get(path, FileVerdict("unknown")).compiled_for
        if path in cuda_only:
            return False
        if verdict in ("rocm", "both"):
            return True
        return os.path.splitext(path)[1].lower() not in _HEADER_SUFFIXES and vendored_directory(model, path) is None

    roots = [p for p in sources if is_root(p)]

    # Every macro some condition tests: the only ones worth a fact.
    tested: set[str] = set()
    definitions: dict[str, list[Definition]] = defaultdict(list)
    edges = _UnionFind()
    for path in sources:
        edges.find(path)
        for directive in index.directives[path]:
            if directive.keyword in _CONDITION_KEYWORDS:
                tested.update(_IDENT.findall(directive.text))
            elif directive.keyword == "define":
                definition = parse_definition(path, directive)
                if definition is not None:
                    definitions[definition.name].append(definition)
            elif directive.keyword in ("include", "include_next"):
                for target in index.include_targets(path, directive, include_dirs):
                    edges.union(path, target)

    table = MacroTable(dict(base))
    learned: dict[str, MacroFact] = {}
    platform: set[str] = set()
    for _ in range(_ROUNDS):
        walk = _Walk(index, table, include_dirs)
        walk.run(roots)
        new_facts, new_platform = _macro_facts(walk, definitions, tested, facts, base, model)
        if new_facts == learned and new_platform == platform:
            break
        learned, platform = new_facts, new_platform
        table = MacroTable({**base, **learned}, frozenset(platform))

    _header_verdicts(model, index, walk, cuda_only, sources, include_dirs)
    _orphan_headers(model, index, walk, sources, include_dirs)
    _hipified(model, facts, index, walk, include_dirs)
    for path in sources:
        if path not in walk.live and path not in model.verdicts:
            directory = vendored_directory(model, path)
            if directory is not None:
                model.verdicts[path] = FileVerdict(
                    "none",
                    f"vendored: {model.relative(directory)} is {model.vendored[directory]}; the ROCm build "
                    "neither compiles this file nor includes it",
                )
        model.tested[path] = frozenset(
            word for d in index.directives[path] if d.keyword in _CONDITION_KEYWORDS for word in _IDENT.findall(d.text)
        )
    _component_tables(model, edges, sources, learned, platform, definitions)
    _shims(model, index, walk, include_dirs)
    if model.has_rocm_side and model.amd_only is None:
        # Asked only by checks of code the CUDA build compiles, for hits no other gate took. A
        # partial, not a lambda: a model read in a worker process comes back pickled.
        model.cuda_reach = partial(_cuda_build_reach, model, index, table, sources, include_dirs)


def _cuda_build_reach(model, index: ProjectSources, table: MacroTable, sources: list[str], include_dirs) -> frozenset[str]:
    """The files the project's CUDA build reads: every source it compiles, every source of the
    project's own that no build names (unknown means both) unless it is HIP source (`.hip`, or
    named for HIP), and the headers they include in branches nvcc may compile (the ROCm side of
    stack tests left out). Checks of code nvcc compiles ask it (`ProjectModel.cuda_build_gate`)."""
    # Where the build files name what the CUDA build compiles, that is the CUDA build; where
    # they name nothing for it, every source of the project's own may be (unknown means both).
    named = any(v.compiled_for in ("cuda", "both") for v in model.verdicts.values())

    def is_root(path: str) -> bool:
        verdict = model.verdicts.get(path, FileVerdict("unknown")).compiled_for
        if verdict == "cuda":
            return True
        if verdict not in ("both", "unknown") or os.path.splitext(path)[1].lower() in _HEADER_SUFFIXES:
            return False
        # A source named for HIP (`hip_fmha/`, `rocm/`, `*_hip.cpp`) that a build's glob takes
        # for both is the ROCm build's: what the CUDA build reads of it, it includes.
        if path.lower().endswith(".hip") or _under_hip_name(path):
            return False
        if verdict == "both":
            return True
        if named:
            return False
        # No build names it: unknown means both, unless it is written for AMD (it includes HIP's
        # headers or calls AMD builtins; Composable Kernel): nothing says nvcc ever sees it.
        text = model.read_text(path) or ""
        return vendored_directory(model, path) is None and not _WRITTEN_FOR_AMD.search(text)

    walk = _Walk(index, nvidia_side_table(table), include_dirs)
    walk.run([p for p in sources if is_root(p)])
    return frozenset(walk.live)


class _Walk:
    """The files HIP-Clang reads from the roots, and where each macro is defined on the way."""

    def __init__(self, index: ProjectSources, table: MacroTable, include_dirs: list[str]):
        self.index = index
        self.table = table
        self.include_dirs = include_dirs
        self.live: set[str] = set()
        self.live_definitions: dict[str, list[tuple[Definition, bool, bool]]] = defaultdict(list)  # (def, platform, unconditional)
        self.undefined: set[str] = set()  # names some read #undef removes
        self.dead_definitions: dict[str, list[tuple[Definition, str]]] = defaultdict(list)
        self.dead_includes: list[tuple[str, str, int, str]] = []  # (includer, target, line, why dead)
        self.include_sites: dict[str, list[tuple[str, bool]]] = defaultdict(list)  # target -> (includer, platform)
        self.regions: dict[str, list] = {}

    def run(self, roots: list[str]) -> None:
        stack = list(reversed(roots))
        while stack:
            path = stack.pop()
            if path in self.live:
                continue
            self.live.add(path)
            regions = self.index.regions(path, self.table)
            self.regions[path] = regions
            for directive, region in regions:
                if directive.keyword in ("include", "include_next"):
                    targets = self.index.include_targets(path, directive, self.include_dirs)
                    for target in targets:
                        if region.live:
                            self.include_sites[target].append((path, region.platform))
                            if target not in self.live:
                                stack.append(target)
                        else:
                            self.dead_includes.append((path, target, directive.line, region.dead_reason or ""))
                elif directive.keyword == "undef":
                    if region.live:
                        self.undefined.add(directive.text.split(" ")[0])
                elif directive.keyword == "define":
                    definition = parse_definition(path, directive)
                    if definition is None:
                        continue
                    if region.live:
                        self.live_definitions[definition.name].append((definition, region.platform, region.unconditional))
                    else:
                        self.dead_definitions[definition.name].append((definition, region.dead_reason or ""))


def _macro_facts(walk: _Walk, definitions, tested: set[str], facts: BuildFacts, base: dict, model: ProjectModel):
    learned: dict[str, MacroFact] = {}
    platform: set[str] = set()
    for name in tested:
        if name in base:
            continue
        live = walk.live_definitions.get(name, [])
        if live and NVIDIA_COMPILER_ONLY.match(name):
            # The compiler's own macro counts as redefined for HIP only where a HIP shim does
            # it (a HIP-named header, one included only from HIP branches, or an AMD branch);
            # a definition under a condition HIP has no reason to meet (an IDE-only macro) does
            # not make it defined.
            live = [entry for entry in live if _on_amd_side(entry, walk)]
            if not live:
                continue
        if live:
            if all(in_platform for _, in_platform, _ in live) and not NVIDIA_COMPILER_ONLY.match(name):
                platform.add(name)
                continue
            value = _known_value(name, live, walk)
            definition = live[0][0]
            where = f"{model.relative(definition.path)}:{definition.line}"
            if value is not None:
                learned[name] = MacroFact(True, value, f"{name} is {value} under HIP ({where})")
            elif NVIDIA_COMPILER_ONLY.match(name):
                learned[name] = MacroFact(None, None, f"{name} is defined by the project for HIP ({where})")
            continue
        cuda_define = facts.defines[CUDA].get(name)
        if name in definitions:
            definition = definitions[name][0]
            dead = next((why for d, why in walk.dead_definitions.get(name, []) if d == definition), None)
            where = f"{model.relative(definition.path)}:{definition.line}"
            if dead:
                how = f"{name} is defined only where HIP-Clang never compiles ({where}, {dead})"
            else:
                how = f"{name} is defined only in files the ROCm build never reads ({where})"
            learned[name] = MacroFact(False, 0, how)
        elif cuda_define is not None:
            learned[name] = MacroFact(False, 0, f"{name} is defined only by the CUDA build ({cuda_define[1].describe()})")
    return learned, platform


def _on_amd_side(entry, walk: _Walk) -> bool:
    definition, in_platform, unconditional = entry
    sites = walk.include_sites.get(definition.path, [])
    if in_platform:
        return True
    return unconditional and (_names_hip(definition.path) or bool(sites and all(p for _, p in sites)))


def _known_value(name: str, live: list, walk: _Walk) -> int | None:
    """The value of a macro every ROCm-read definition gives the same integer, unconditionally
    (`#define GGML_CUDA_CC_TURING 750`, `#define __CUDA_ARCH__ 1300` in a HIP shim)."""
    if name in walk.undefined:
        return None
    values = set()
    for definition, _, unconditional in live:
        if definition.parameters is not None or not unconditional or not definition.body:
            return None
        value, _ = ConditionUnderHip.evaluate(definition.body, walk.table)
        if value is None:
            return None
        values.add(value)
    return values.pop() if len(values) == 1 else None


def _header_verdicts(model, index, walk: _Walk, cuda_only: set[str], sources: list[str], include_dirs) -> None:
    """Headers HIP-Clang never reads, that CUDA-only files (or dead branches) include."""
    reached: dict[str, str] = {}
    stack: list[tuple[str, str]] = []
    for path in sorted(cuda_only):
        where = model.verdicts[path].origin if path in model.verdicts else None
        stack.append((path, f"code the ROCm build never compiles: {model.relative(path)}" + (f" ({where})" if where else "")))
    for includer, target, line, why in walk.dead_includes:
        stack.append((target, f"code HIP-Clang never compiles: {model.relative(includer)}:{line}, {why}"))
    while stack:
        path, why = stack.pop()
        if path in reached or path in walk.live:
            continue
        reached[path] = why
        for directive in index.directives.get(path, ()):
            if directive.keyword in ("include", "include_next"):
                for target in index.include_targets(path, directive, include_dirs):
                    if target not in reached and target not in walk.live:
                        stack.append((target, why))
    for path, why in reached.items():
        if path in cuda_only or path in model.verdicts and model.verdicts[path].compiled_for != "unknown":
            continue
        if os.path.splitext(path)[1].lower() not in _HEADER_SUFFIXES:
            continue
        model.verdicts[path] = FileVerdict("cuda", f"CUDA-only: included only by {why}")


def _orphan_headers(model, index: ProjectSources, walk: _Walk, sources: list[str], include_dirs) -> None:
    """A header no project file includes (a code generator's template, say) whose directory
    holds only CUDA-only sources is CUDA-only with them; so are the headers only it includes."""
    included = set(walk.include_sites)
    for path, directives in index.directives.items():
        for directive in directives:
            if directive.keyword in ("include", "include_next"):
                included.update(index.include_targets(path, directive, include_dirs))
    by_directory: dict[str, list[str]] = defaultdict(list)
    for path in sources:
        by_directory[os.path.dirname(path)].append(path)
    for paths in by_directory.values():
        built = [p for p in paths if p in model.verdicts and os.path.splitext(p)[1].lower() not in _HEADER_SUFFIXES]
        if not built or any(model.verdicts[p].compiled_for != "cuda" for p in built):
            continue
        orphans = [
            p for p in paths
            if os.path.splitext(p)[1].lower() in _HEADER_SUFFIXES and p not in walk.live and p not in included
            and model.verdicts.get(p, FileVerdict("unknown")).compiled_for == "unknown"
        ]
        example = min(built)
        why = (f"CUDA-only: no project file includes it and every source beside it is CUDA-only "
               f"(e.g. {model.relative(example)})")
        stack = list(orphans)
        while stack:
            path = stack.pop()
            if path in walk.live or model.verdicts.get(path, FileVerdict("unknown")).compiled_for != "unknown":
                continue
            model.verdicts[path] = FileVerdict("cuda", why)
            for directive in index.directives.get(path, ()):
                if directive.keyword in ("include", "include_next"):
                    stack.extend(index.include_targets(path, directive, include_dirs))


def _hipified(model, facts: BuildFacts, index: ProjectSources, walk: _Walk, include_dirs) -> None:
    """Sources a hipifying ROCm build compiles, and the project headers they include."""
    stack = [(path, why) for path, why in facts.hipified.items()]
    while stack:
        path, why = stack.pop()
        if path in model.hipified:
            continue
        model.hipified[path] = why
        for directive, region in walk.regions.get(path, ()):
            if directive.keyword in ("include", "include_next") and region.live:
                stack.extend((target, why) for target in index.include_targets(path, directive, include_dirs))


def _component_tables(model, edges: _UnionFind, sources, learned: dict, platform: set, definitions) -> None:
    """Each group of files connected by includes gets the macro facts of its own definitions;
    facts from the CUDA build's command line apply everywhere."""
    component_ids: dict[str, int] = {}
    for path in sources:
        root = edges.find(path)
        model.component_of[path] = component_ids.setdefault(root, len(component_ids))
    per_component: dict[int, dict[str, MacroFact]] = defaultdict(dict)
    per_component_platform: dict[int, set[str]] = defaultdict(set)
    for name, fact in learned.items():
        holders = {model.component_of[d.path] for d in definitions.get(name, []) if d.path in model.component_of}
        targets = holders if holders else set(component_ids.values())
        for component in targets:
            per_component[component][name] = fact
    for name in platform:
        for definition in definitions.get(name, []):
            if definition.path in model.component_of:
                per_component_platform[model.component_of[definition.path]].add(name)
    for component in set(per_component) | set(per_component_platform):
        model.tables[component] = MacroTable(per_component.get(component, {}), frozenset(per_component_platform.get(component, ())))


def _shims(model, index: ProjectSources, walk: _Walk, include_dirs) -> None:
    shim_files: set[str] = set()
    for name, entries in walk.live_definitions.items():
        warp = bool(_WARP_INTRINSIC.match(name))
        if not warp and not _DEVICE_INTRINSIC.match(name):
            continue
        for definition, in_platform, _ in entries:
            if definition.parameters is None:
                continue
            sites = walk.include_sites.get(definition.path, [])
            amd_side = in_platform or (sites and all(p for _, p in sites)) or _names_hip(definition.path)
            if not amd_side:
                continue
            drops_mask = None
            if warp:
                mask = definition.parameters[0] if definition.parameters else ""
                drops_mask = bool(mask) and mask not in _IDENT.findall(definition.body)
            model.shims.setdefault(name, []).append(Shim(name, definition.path, definition.line, drops_mask))
            shim_files.add(definition.path)
    # CUDA runtime names a HIP shim header renames for HIP (`#define cudaMalloc hipMalloc`,
    # llama.cpp's vendors/hip.h): the files that include it use them as HIP.
    for name, entries in walk.live_definitions.items():
        if not RUNTIME_NAME.fullmatch(name):
            continue
        for definition, in_platform, _ in entries:
            sites = walk.include_sites.get(definition.path, [])
            if in_platform or (sites and all(p for _, p in sites)) or _names_hip(definition.path):
                model.shims.setdefault(name, []).append(Shim(name, definition.path, definition.line, None))
                model.runtime_shims[definition.path] = model.runtime_shims.get(definition.path, 0) + 1
                shim_files.add(definition.path)
    # Device functions a HIP shim header defines under an intrinsic's name (llama.cpp's
    # vendors/hip.h defines `__vsub4`, `__vcmpne4`, ... as `__device__` functions), and CUDA
    # types it names for HIP types (`typedef __hip_bfloat16 nv_bfloat16;`).
    for path in walk.live:
        sites = walk.include_sites.get(path, [])
        if not (_names_hip(path) or (sites and all(p for _, p in sites) and not _names_cuda(path))):
            continue
        text = model.read_text(path)
        if text and ("typedef" in text or "using" in text):
            for match in _TYPE_ALIAS.finditer(text):
                name = match.group(1) or match.group(2)
                if RUNTIME_NAME.fullmatch(name):
                    line = text.count("\n", 0, match.start()) + 1
                    model.shims.setdefault(name, []).append(Shim(name, path, line, None))
                    model.runtime_shims[path] = model.runtime_shims.get(path, 0) + 1
                    shim_files.add(path)
        if not text or "__device__" not in text:
            continue
        for match in _DEVICE_FUNCTION.finditer(text):
            name = match.group(1)
            if _DEVICE_INTRINSIC.match(name) and not any(s.path == path for s in model.shims.get(name, ())):
                line = text.count("\n", 0, match.start(1)) + 1
                model.shims.setdefault(name, []).append(Shim(name, path, line, None))
                shim_files.add(path)
    if not shim_files:
        return
    includers: dict[str, set[str]] = defaultdict(set)
    for path, regions in walk.regions.items():
        for directive, region in regions:
            if directive.keyword in ("include", "include_next") and region.live:
                for target in index.include_targets(path, directive, include_dirs):
                    includers[target].add(path)
    model.includers = {target: frozenset(sources) for target, sources in includers.items()}
    for shim_file in shim_files:
        users = {shim_file}
        stack = [shim_file]
        while stack:
            for includer in includers.get(stack.pop(), ()):
                if includer not in users:
                    users.add(includer)
                    stack.append(includer)
        model.shim_users[shim_file] = frozenset(users)


_TYPE_ALIAS = re.compile(r"\btypedef\s+[^;{}()]*?\b(\w+)\s*;|\busing\s+(\w+)\s*=")
_DEVICE_FUNCTION = re.compile(r"\b__device__\b[^;{}()]*?\b(__[a-z]\w*)\s*\([^;{}]*\)\s*(?:const\s*)?\{")


_WRITTEN_FOR_AMD = re.compile(
    r"\b__builtin_amdgcn_\w+|\bck(?:_tile)?::|#\s*include\s*[<\"](?:hip|hipcub|rocprim|rocwmma|ck|ck_tile|rccl|miopen)/"
    r"|#\s*include\s*[<\"](?:rocblas|hipblas\w*|rccl)\.h"
)


def _under_hip_name(path: str) -> bool:
    """A file named for HIP, or in a folder of the project named for it at any depth
    (`hip_fmha/instances/`, `csrc/rocm/`)."""
    from rocmlint.files.project_start import folders_in_project
    from rocmlint.platforms import names_rocm

    below = folders_in_project(path) or ""
    return names_rocm(os.path.splitext(os.path.basename(path))[0]) or any(names_rocm(part) for part in below.split("/") if part)


def _names_cuda(path: str) -> bool:
    from rocmlint.platforms import names_cuda

    return names_cuda(os.path.splitext(os.path.basename(path))[0])


def _names_hip(path: str) -> bool:
    """A file named for HIP, or in a folder of the project named for it (`vendors/hip/`); not
    the folder the checkout was put in (`~/src/vllm-rocm/`)."""
    from rocmlint.files.project_start import folders_in_project
    from rocmlint.platforms import names_rocm

    below = folders_in_project(path)
    return names_rocm(os.path.splitext(os.path.basename(path))[0]) or bool(below) and names_rocm(below.split("/")[-1])
