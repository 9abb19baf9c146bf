"""RuntimeWarnings given once per key: a fallback taken on every call says so on the first."""

from __future__ import annotations

import threading
import warnings


class OnceWarnings:
    """One module's set of warnings already given. `stacklevel` is as for `warnings.warn`
    called from the function that calls `warn` (2 names that function's caller)."""

    def __init__(self, stacklevel: int):
        self._stacklevel = stacklevel
        self._given: set[str] = set()
        self._lock = threading.Lock()

    def warn(self, key: str, message: str) -> None:
        with self._lock:
            if key in self._given:
                return
            self._given.add(key)
        warnings.warn(message, RuntimeWarning, stacklevel=self._stacklevel + 1)

    def clear(self) -> None:
        with self._lock:
            self._given.clear()
