"""What "already gated" means for C/C++ code, for every check.

A line is gated when it sits inside a preprocessor conditional chain that has tested a
ROCm/HIP macro (``USE_ROCM``, ``__HIP_PLATFORM_AMD__``, ``__HIPCC__``, ``__HIP__``, ...) in
that branch or an earlier one of the same chain — so ``#else`` of ``#ifdef USE_ROCM`` counts —
or inside a branch that HIP-Clang never compiles: ``#if 0``, or one that needs a macro only
NVIDIA's compilers define (``#if __CUDA_ARCH__ >= 800``, the ``#else`` of
``#if !defined(__CUDA_ARCH__)``). Include guards are never gates.
"""

from __future__ import annotations

import re

from rocmlint.cpp.preprocessor import (
    NO_PROJECT,
    Chain,
    Directive,
    MacroTable,
    amd_side_table,
    condition_names_platform,
    condition_value,
    nvidia_side_table,
    scan_directives,
)

_GUARD_TEST = re.compile(r"^\s*(?:!\s*defined\s*\(?\s*)?([A-Za-z_][A-Za-z0-9_]*)\s*\)?\s*$")
_OPENERS = ("if", "ifdef", "ifndef")
_BRANCHES = ("elif", "elifdef", "elifndef", "else")


class PreprocessorGates:
    """Which lines sit inside a ROCm/HIP-gated preprocessor region, or in a branch that
    HIP-Clang never compiles, and why.

    A chain is a gate from the first branch whose condition names a GPU stack macro
    (`USE_ROCM`, `__HIP_PLATFORM_AMD__`, `__HIPCC__`, `__HIP__`, `__NVCC__`, a project macro
    that the project defines per GPU stack, ...) to its `#endif`: `#ifdef USE_ROCM` gates both
    of its sides, and `#if A` / `#elif defined(__HIP__)` leaves the `#if A` branch ungated.
    Apart from that, a single branch is gated when its condition is known to be false under
    HIP-Clang (`#if 0`, `#ifdef __CUDA_ARCH__`, `#if __CUDA_ARCH__ >= 800`, or a project
    macro that the project model knows is only ever defined for NVIDIA), or an earlier branch
    is known to be taken there (the `#else` of `#if !defined(__CUDA_ARCH__)`); the `#else` of
    `#if __CUDA_ARCH__ >= 800` is what AMD compiles and stays ungated. Nested chains inside a
    gate are gated. Directives are read from the code only (see
    `rocmlint.cpp.preprocessor.scan_directives`). An include guard (`#ifndef HIP_UTILS_H`
    followed by `#define HIP_UTILS_H`) is not a gate whatever its name.
    """

    def __init__(self, text: str, macros: MacroTable = NO_PROJECT):
        directives = scan_directives(text)
        lines = text.split("\n")
        guards = {i for i in range(len(directives)) if self.include_guard(directives, i, lines)}
        self._compute(directives, len(lines), guards, macros)

    @classmethod
    def from_directives(cls, directives: list[Directive], line_count: int, guards: set[int], macros: MacroTable):
        """The same, from directives the project pass has already read (`guards`: the indexes
        of directives that open include guards)."""
        gates = cls.__new__(cls)
        gates._compute(directives, line_count, guards, macros)
        return gates

    def _compute(self, directives: list[Directive], count: int, guards: set[int], macros: MacroTable) -> None:
        self.macros = macros
        side_table = amd_side_table(macros)
        nvidia_table = nvidia_side_table(macros)
        self._reasons: list[str | None] = [None] * (count + 2)
        # Lines gated only because they are the AMD side of a stack test (`#ifdef USE_ROCM`
        # ... here ... `#else`): code HIP compiles, which a check may still want to read.
        self._amd_side: list[bool] = [False] * (count + 2)
        stack: list[Chain] = []
        # For each depth of `stack`: (the index of the outermost chain that gates, up to this
        # depth; whether every gating chain up to it is the AMD side), so that a directive
        # costs the same at any depth (10,000 nested #if are read in linear time).
        levels: list[tuple[int | None, bool]] = []
        current: tuple[str | None, bool] = (None, False)
        line = 1
        for index, directive in enumerate(directives):
            for number in range(line, min(directive.line, count + 1)):
                self._reasons[number], self._amd_side[number] = current
            keyword = directive.keyword
            before = current
            if keyword in _OPENERS:
                value, deciding = condition_value(keyword, directive.text, macros)
                platform = index not in guards and condition_names_platform(directive.text, macros)
                stack.append(Chain(platform, value, (directive.line, f"{keyword} {directive.text}".strip(), tuple(deciding))))
            elif keyword in _BRANCHES and stack:
                value, deciding = condition_value(keyword, directive.text, macros)
                platform = keyword != "else" and condition_names_platform(directive.text, macros)
                stack[-1].next_branch(platform, value, keyword == "else", (directive.line, f"{keyword} {directive.text}".strip(), tuple(deciding)))
            elif keyword == "endif" and stack:
                stack.pop()
                levels.pop()
            if keyword in _OPENERS or (keyword in _BRANCHES and stack):
                # The new branch's value on the AMD side of a stack test and in the NVIDIA build.
                stack[-1].side(
                    condition_value(keyword, directive.text, side_table)[0], keyword == "else",
                    condition_value(keyword, directive.text, nvidia_table)[0],
                )
                # Only the innermost chain changed: summarise it on top of the one below.
                if keyword in _OPENERS:
                    levels.append((None, True))
                below = levels[-2] if len(levels) > 1 else (None, True)
                levels[-1] = self._level(below, stack[-1], len(stack) - 1)
            current = self._state_of(stack, levels)
            # `#elif`/`#else`/`#endif` belong to their chain; the line that opens a chain
            # belongs to the code around it, so a check about the condition itself
            # (`#if __CUDA_ARCH__ >= 800`) still sees it.
            here = before if keyword in _OPENERS or keyword in ("define", "undef", "include", "include_next") else (before if before[0] else current)
            for number in range(directive.line, min(directive.last_line, count) + 1):
                self._reasons[number], self._amd_side[number] = here
            line = directive.last_line + 1
        for number in range(line, count + 1):
            self._reasons[number], self._amd_side[number] = current

    @staticmethod
    def _level(below: tuple[int | None, bool], chain: Chain, index: int) -> tuple[int | None, bool]:
        outermost, amd_side = below
        if chain.gates():
            return (index if outermost is None else outermost), amd_side and chain.amd_side()
        return outermost, amd_side

    def _state_of(self, stack: list[Chain], levels: list[tuple[int | None, bool]]) -> tuple[str | None, bool]:
        """(why the current lines are gated, whether only as the AMD side of stack tests)."""
        if not stack:
            return None, False
        outermost, amd_side = levels[-1]
        if outermost is None:
            return None, False
        # The outermost gate is why everything inside it is gated.
        reason = stack[outermost].reason(self.macros)
        if reason is None:
            return None, False
        return reason, amd_side

    @staticmethod
    def include_guard(directives: list[Directive], index: int, lines: list[str]) -> bool:
        """`#ifndef X` or `#if !defined(X)` followed by `#define X`, with only blank or
        comment lines between."""
        keyword, condition = directives[index].keyword, directives[index].text
        if keyword == "ifndef":
            name = condition.strip()
        elif keyword == "if" and "!" in condition:
            guard = _GUARD_TEST.match(condition)
            name = guard.group(1) if guard else ""
        else:
            return False
        if index + 1 >= len(directives):
            return False
        following = directives[index + 1]
        if following.keyword != "define":
            return False
        between = lines[directives[index].last_line : following.line - 1]
        if any(t.strip() and not t.strip().startswith(("//", "/*", "*")) for t in between):
            return False
        defined = following.text.split("(")[0].split()
        return bool(defined) and defined[0] == name

    def is_gated(self, line: int) -> bool:
        return 0 < line < len(self._reasons) and self._reasons[line] is not None

    def on_amd_side(self, line: int) -> bool:
        """Is the line on the AMD side of a stack test (`#ifdef USE_ROCM` ... `#else`)?"""
        return 0 < line < len(self._amd_side) and self._amd_side[line]

    def reason(self, line: int, check_amd_side: bool = False) -> str | None:
        """Why a line is gated, or None. With `check_amd_side`, the AMD side of a stack test
        (`#ifdef USE_ROCM` ... `#else`) is not gated: code HIP compiles can be wrong too."""
        if not 0 < line < len(self._reasons):
            return None
        if check_amd_side and self._amd_side[line]:
            return None
        return self._reasons[line]
