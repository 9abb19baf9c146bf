"""How much work reading build files may take, and how large a value may grow.

A build file is a program, and the readers walk it as written: a CMake function that calls
itself twice, four nested `foreach(RANGE 60)` or forty `set(A "${A}${A}")` would take for
ever or fill memory. So every walk spends from one `WorkBudget`: the project pass shares one
between all the build files of a project, the per-file pass has one per file. A reader spends
one step for each statement, line or expression it runs (`spend`), and calls `limit` where one
of its caps cuts the walk short: a call or an include nested deeper than MAX_DEPTH (an include
cycle, a function that calls itself), a `foreach` over more than MAX_LOOP_ELEMENTS elements, a
value longer than MAX_VALUE_CHARACTERS or a list of more than MAX_LIST_ELEMENTS.

A walk that was cut short did not see all of its build: whoever started it takes what the build
file says as unknown (it gates nothing) and says so (`BuildFacts.not_fully_read`, reported as a
skipped file). When the steps run out the walk stops at once (`OutOfBudget`).
"""

from __future__ import annotations

# Steps for all the build files of one project. Real builds take far fewer (measured, both
# vendors' walks: llama.cpp's 86 build files 38,000, vLLM 31,000, DeepSpeed 13,000, flash-attn
# 9,000); a walk that needs more is one of the cases above. A step takes 15-50 microseconds
# (2-core machine), so a walk that runs out ends within seconds.
PROJECT_STEPS = 300_000
# Nested calls, includes and add_subdirectory: real builds nest a handful deep.
MAX_DEPTH = 40
# A foreach over more elements than this is not walked element by element.
MAX_LOOP_ELEMENTS = 10_000
# A string value (a variable, an expansion) longer than this is unknown. Real values are
# source lists and flags: kilobytes.
MAX_VALUE_CHARACTERS = 1 << 20
# The most elements (sources, words) one list value keeps.
MAX_LIST_ELEMENTS = 20_000


class OutOfBudget(Exception):
    """The steps of a WorkBudget ran out: the walk stops, and what it read is unknown."""


class WorkBudget:
    def __init__(self, steps: int = PROJECT_STEPS):
        self.steps = steps
        self.left = steps
        self.limits: list[str] = []  # why walks were cut short since the last `take_limits`

    def spend(self, steps: int = 1) -> None:
        self.left -= steps
        if self.left < 0:
            raise OutOfBudget(f"reading the build files took more than {self.steps:,} steps")

    def limit(self, why: str) -> None:
        """A cap cut the walk short (the first few reasons are kept, each once)."""
        if why not in self.limits and len(self.limits) < 3:
            self.limits.append(why)

    def take_limits(self) -> list[str]:
        limits, self.limits = self.limits, []
        return limits


def too_long(text: str) -> bool:
    return len(text) > MAX_VALUE_CHARACTERS
