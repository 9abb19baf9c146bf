import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


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
