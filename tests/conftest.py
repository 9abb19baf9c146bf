import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# The suite keeps the parsed check catalog in a folder of its own, not in the user's cache folder.
_XDG_CACHE = tempfile.mkdtemp(prefix="rocmlint-test-cache-")
os.environ["XDG_CACHE_HOME"] = _XDG_CACHE
atexit.register(shutil.rmtree, _XDG_CACHE, True)


@pytest.fixture
def repo_root() -> Path:
    return REPO


def run_cli(*args, cwd=None, env=None):
    """Run the installed `rocmlint` console entry in a subprocess, as a user would."""
    import subprocess

    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "rocmlint", *args],
        cwd=cwd or REPO,
        capture_output=True,
        text=True,
        env=full_env,
        timeout=600,
    )


# Property-based tests draw the same examples on every run of the suite, so that a CI result
# can be reproduced; ROCMLINT_FUZZ_RANDOM=1 draws new ones (for longer exploratory runs).
try:
    from hypothesis import settings as _hypothesis_settings

    _hypothesis_settings.register_profile("reproducible", derandomize=True)
    _hypothesis_settings.register_profile("explore", derandomize=False)
    _hypothesis_settings.load_profile("explore" if os.environ.get("ROCMLINT_FUZZ_RANDOM") == "1" else "reproducible")
except ImportError:  # pragma: no cover - hypothesis is in the test extra
    pass
