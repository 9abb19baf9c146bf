import atexit
import os
import shutil
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# The suite keeps the parsed check catalog in a folder of its own, not in the user's cache folder.
_XDG_CACHE = tempfile.mkdtemp(prefix="rocmlint-test-cache-")
os.environ["XDG_CACHE_HOME"] = _XDG_CACHE
atexit.register(shutil.rmtree, _XDG_CACHE, True)


# A file with two findings (ROCM001 and ROCM002 on lines 1 and 4): the CLI tests' project.
PITFALLS = textwrap.dedent(
    """\
    import pynvml
    import torch

    model = torch.compile(model, mode="reduce-overhead")
    """
)


def write_project(tmp_path, text=PITFALLS, name="train.py"):
    """One file of a project in `tmp_path` (folders made as needed); the project's folder."""
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return tmp_path


def lsp_messages(stream):
    """The messages a language server writes to `stream`, decoded, until it closes
    (`Content-Length` framing, as the Language Server Protocol's base protocol has it)."""
    import json

    while True:
        headers = {}
        while True:
            line = stream.readline()
            if not line:
                return
            line = line.decode("ascii").strip()
            if not line:
                break
            name, value = line.split(":", 1)
            headers[name.lower()] = value.strip()
        yield json.loads(stream.read(int(headers["content-length"])).decode("utf-8"))


def write_files(root, files: dict[str, str]) -> str:
    """Files of a project under `root`, each text dedented; the folder as a string."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return str(root)


def link_maze(root) -> list[str]:
    """Folders under `root` reached through symbolic links of every kind (relative, absolute,
    upwards, a loop, dangling); the names to build paths from, `new` naming nothing."""
    (root / "a" / "b" / "c").mkdir(parents=True)
    (root / "a" / "to_b").symlink_to("b")
    (root / "a" / "b" / "up").symlink_to("../..")
    (root / "a" / "b" / "c" / "abs").symlink_to(root / "a")
    (root / "a" / "loop").symlink_to("loop")
    (root / "a" / "gone").symlink_to("nowhere")
    return ["a", "b", "c", "to_b", "up", "abs", "loop", "gone", "new"]


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
