"""The C/C++ side of the project model: every file's directives, its includes, the macros the
project defines and under which conditions, and the HIP shims it carries.

`ProjectSources` reads each C/C++ file of the project once (directives only, with the fast
scanner of `rocmlint.cpp.preprocessor`), resolves `#include` lines to project files, and answers,
for a MacroTable, which regions of a file HIP-Clang compiles.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from dataclasses import dataclass

from rocmlint.cpp.preprocessor import Chain, Directive, MacroTable, condition_names_platform, condition_value, scan_directives

_INCLUDE_TARGET = re.compile(r'^\s*(?:"([^"]+)"|<([^>]+)>)')
_DEFINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\(([^)]*)\))?\s*(.*)$", re.S)
_OPENERS = ("if", "ifdef", "ifndef")
_NOT_CONDITIONS = ("include", "include_next", "define", "undef", "else", "endif")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BRANCHES = ("elif", "elifdef", "elifndef", "else")


@dataclass(frozen=True)
class Definition:
    path: str
    line: int
    name: str
    parameters: tuple[str, ...] | None  # None: an object-like macro
    body: str


@dataclass(frozen=True)
class Region:
    """Where a directive sits, as HIP-Clang reads it under one MacroTable."""

    live: bool  # not in a branch HIP-Clang never compiles
    dead_reason: str | None  # why not, when not live
    platform: bool  # inside a branch chain that tests a GPU stack
    platform_reason: str | None
    unconditional: bool = False  # inside no conditional at all, but the file's include guard


@dataclass(frozen=True)
class FileDirectives:
    """What the project pass needs of one C/C++ file: its directives, its length in lines, and
    which of its first directives open an include guard."""

    directives: tuple[Directive, ...]
    line_count: int
    guards: frozenset[int]


def file_directives(text: str | None) -> FileDirectives:
    if not text:
        return FileDirectives((), 0, frozenset())
    directives = tuple(scan_directives(text, exact=False))
    guards: frozenset[int] = frozenset()
    if any(d.keyword in ("ifndef", "if") for d in directives[:3]):
        from rocmlint.cpp.gates import PreprocessorGates

        lines = text.split("\n")
        guards = frozenset(i for i in range(min(3, len(directives))) if PreprocessorGates.include_guard(directives, i, lines))
    return FileDirectives(directives, text.count("\n") + 1, guards)


class ProjectSources:
    """Every C/C++ file's directives. `known` holds files the scan has already read (the
    scanner's workers hand them over), so the project pass reads only the others."""

    def __init__(self, paths: list[str], read_text, known: dict[str, FileDirectives] | None = None):
        self.paths = paths
        self.directives: dict[str, list[Directive]] = {}
        self.by_name: dict[str, list[str]] = defaultdict(list)
        for path in paths:
            self.by_name[os.path.basename(path)].append(path)
        self.line_counts: dict[str, int] = {}
        self.guards: dict[str, frozenset[int]] = {}
        known = known or {}
        for path in paths:
            entry = known.get(path)
            if entry is None:
                entry = file_directives(read_text(path))
            self.directives[path] = entry.directives
            self.line_counts[path] = entry.line_count
            if entry.guards:
                self.guards[path] = entry.guards
        self._resolved: dict[tuple[str, str, bool], tuple[str, ...]] = {}
        self._targets: dict[tuple[str, int], tuple[str, ...]] = {}
        # Condition values under the current MacroTable (the same few conditions repeat in
        # every file of a project): (keyword, text) -> (value, deciding macros, platform)
        self._conditions: dict[tuple[str, str], tuple] = {}
        self._conditions_table: MacroTable | None = None
        # regions per file, kept across MacroTables that differ only in macros the file never tests
        self._regions: dict[str, tuple[MacroTable, list]] = {}
        self._tested: dict[str, frozenset[str]] = {}
        self._changed: dict[tuple[int, int], frozenset[str]] = {}

    def __getstate__(self) -> dict:
        # A model read in a worker process comes back pickled: `_changed` is keyed by the ids of
        # MacroTables, which name other objects in another process.
        state = dict(self.__dict__)
        state["_changed"] = {}
        return state

    # --- includes -------------------------------------------------------------------------

    def include_targets(self, path: str, directive: Directive, include_dirs: list[str]) -> tuple[str, ...]:
        key = (path, directive.line)
        targets = self._targets.get(key)
        if targets is None:
            match = _INCLUDE_TARGET.match(directive.text)
            if not match:
                targets = ()
            else:
                spelled = match.group(1) or match.group(2)
                targets = self.resolve(path, spelled, bool(match.group(2)), include_dirs)
            self._targets[key] = targets
        return targets

    def resolve(self, includer: str, spelled: str, angled: bool, include_dirs: list[str]) -> tuple[str, ...]:
        """Project files an include may name: next to the includer (quoted form), in an include
        directory the build adds, or else every project file whose path ends with the spelled
        name (`cutlass/gemm/gemm.h`), nearest to the includer first. System headers match
        nothing."""
        key = (os.path.dirname(includer), spelled, angled)
        cached = self._resolved.get(key)
        if cached is not None:
            return cached
        spelled = spelled.strip().replace("\\", "/")
        found: tuple[str, ...] = ()
        if not angled:
            local = os.path.normpath(os.path.join(os.path.dirname(includer), spelled))
            if local in self.directives:
                found = (local,)
        if not found:
            for directory in include_dirs:
                candidate = os.path.normpath(os.path.join(directory, spelled))
                if candidate in self.directives:
                    found = (candidate,)
                    break
        if not found:
            tail = "/" + spelled.lstrip("./")
            candidates = [p for p in self.by_name.get(os.path.basename(spelled), ()) if p.endswith(tail)]
            if len(candidates) > 1:
                # The candidates that share the longest directory prefix with the includer.
                def shared(p: str) -> int:
                    return len(os.path.commonpath([p, includer])) if p[:1] == includer[:1] else 0

                best = max(shared(p) for p in candidates)
                candidates = [p for p in candidates if shared(p) == best]
            found = tuple(sorted(candidates))
        self._resolved[key] = found
        return found

    # --- regions --------------------------------------------------------------------------

    def _condition(self, keyword: str, text: str, macros: MacroTable) -> tuple:
        if self._conditions_table is not macros:
            self._conditions, self._conditions_table = {}, macros
        key = (keyword, text)
        known = self._conditions.get(key)
        if known is None:
            value, deciding = condition_value(keyword, text, macros)
            platform = keyword != "else" and condition_names_platform(text, macros)
            known = self._conditions[key] = (value, tuple(deciding), platform)
        return known

    def _changed_between(self, old: MacroTable, new: MacroTable) -> frozenset[str]:
        key = (id(old), id(new))
        changed = self._changed.get(key)
        if changed is None:
            names = set(old.facts) | set(new.facts)
            changed = frozenset({n for n in names if old.facts.get(n) != new.facts.get(n)} | (old.platform ^ new.platform))
            self._changed[key] = changed
        return changed

    def regions(self, path: str, macros: MacroTable) -> list[tuple[Directive, Region]]:
        """Each #include/#define/#undef of a file with the region it sits in."""
        cached = self._regions.get(path)
        if cached is not None:
            table, regions = cached
            if table is macros:
                return regions
            tested = self._tested.get(path)
            if tested is None:
                tested = self._tested[path] = frozenset(
                    word for d in self.directives.get(path, ()) if d.keyword not in _NOT_CONDITIONS for word in _WORD.findall(d.text)
                )
            if not (tested & self._changed_between(table, macros)):
                self._regions[path] = (macros, regions)
                return regions
        regions = self._compute_regions(path, macros)
        self._regions[path] = (macros, regions)
        return regions

    def _compute_regions(self, path: str, macros: MacroTable) -> list[tuple[Directive, Region]]:
        result: list[tuple[Directive, Region]] = []
        stack: list[Chain] = []
        guards = self.guards.get(path, set())
        guard_depth = 0  # how many of the open chains are include guards
        for index, directive in enumerate(self.directives.get(path, ())):
            keyword = directive.keyword
            if keyword in _OPENERS:
                if index in guards:
                    guard_depth += 1
                    stack.append(Chain(False, None, (directive.line, f"{keyword} {directive.text}", ())))
                    continue
                value, deciding, platform = self._condition(keyword, directive.text, macros)
                stack.append(Chain(platform, value, (directive.line, f"{keyword} {directive.text}".strip(), deciding)))
            elif keyword in _BRANCHES and stack:
                value, deciding, platform = self._condition(keyword, directive.text, macros)
                at = (directive.line, f"{keyword} {directive.text}".strip(), deciding)
                stack[-1].next_branch(platform, value, keyword == "else", at)
            elif keyword == "endif" and stack:
                stack.pop()
                guard_depth = min(guard_depth, len(stack))
            elif keyword in ("include", "include_next", "define", "undef"):
                if len(stack) <= guard_depth:
                    result.append((directive, _TOP_LEVEL))
                    continue
                dead = next((c for c in stack if c.dead), None)
                platform = next((c for c in stack if c.platform), None)
                result.append(
                    (
                        directive,
                        Region(
                            live=dead is None,
                            dead_reason=dead.reason(macros) if dead else None,
                            platform=platform is not None,
                            platform_reason=platform.reason(macros) if platform else None,
                        ),
                    )
                )
        return result


_TOP_LEVEL = Region(live=True, dead_reason=None, platform=False, platform_reason=None, unconditional=True)


def parse_definition(path: str, directive: Directive) -> Definition | None:
    match = _DEFINE.match(directive.text)
    if not match:
        return None
    parameters = None
    if match.group(2) is not None and directive.text[len(match.group(1))] == "(":
        parameters = tuple(p.strip() for p in match.group(3).split(",") if p.strip())
    return Definition(path, directive.line, match.group(1), parameters, match.group(4).strip())
