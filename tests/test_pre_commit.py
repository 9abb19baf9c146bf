"""The pre-commit hook (.pre-commit-hooks.yaml), run by real pre-commit with `try-repo` on a
small git repository: it finds pitfalls in Python, HIP and CMake files, honours the project's
exclude patterns although pre-commit names every file, and passes on clean code."""

import os
import re
import shutil
import subprocess
import sys

import yaml

from conftest import REPO
from rocmlint.files.languages import language_of

HOOKS = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
GIT = ["git", "-c", "user.name=rocmlint tests", "-c", "user.email=tests@localhost", "-c", "commit.gpgsign=false"]


def test_hook_files_pattern_is_what_rocmlint_reads():
    (hook,) = HOOKS
    pattern = re.compile(hook["files"])
    names = [
        "a.py", "a.pyi", "k.cu", "k.cuh", "k.hip", "K.HIP", "a.cpp", "a.cc", "a.cxx", "a.c++", "a.c", "a.h", "a.hpp",
        "a.hh", "a.hxx", "a.inl", "x.cmake", "x.mk", "s.sh", "s.bash", "c.yml", "c.yaml", "x.dockerfile", "prod.env",
        "CMakeLists.txt", "Makefile", "makefile", "GNUmakefile", "Dockerfile", "Containerfile", "pyproject.toml", ".env",
        "requirements.txt", "requirements-dev.in", "constraints.txt", "Dockerfile.rocm", "Dockerfile-cuda",
        "Containerfile.x", "app.Dockerfile", ".env.local", "requirements/cuda.txt", "reqs/base.in",
        "sub/dir/requirements-gpu.txt", "src/k.CU", "README.md", "setup.cfg", "notes.txt", "a.pyc", "x.json",
        "docs/requirements.md", "cmakelists.txt", "x/Makefile.am", "LICENSE",
    ]
    for name in names:
        assert bool(pattern.search(name)) == (language_of(name) is not None), name
    assert hook["entry"].split()[:3] == ["rocmlint", "scan", "--force-exclude"]
    assert hook["language"] == "python" and hook["require_serial"] is True


def _hook_repository(path):
    """The project as a git repository, as pre-commit clones it."""
    for name in ("pyproject.toml", "README.md", "LICENSE", "setup.cfg", ".pre-commit-hooks.yaml"):
        shutil.copy(REPO / name, path / name)
    for folder in ("rocmlint", "checks"):
        shutil.copytree(REPO / folder, path / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    subprocess.run(["git", "init", "-q"], cwd=path, check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=path, check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", "rocmlint"], cwd=path, check=True)


def test_pre_commit_try_repo(tmp_path):
    hooks, project, home = tmp_path / "hooks", tmp_path / "project", tmp_path / "pre-commit-home"
    for folder in (hooks, project, home):
        folder.mkdir()
    _hook_repository(hooks)
    files = {
        "app/monitor.py": "import pynvml\n",
        "csrc/reduce.hip": "__device__ float r(float v) { return __shfl_xor_sync(0xffffffff, v, 16); }\n",
        "CMakeLists.txt": "cmake_minimum_required(VERSION 3.24)\nproject(app LANGUAGES CXX CUDA)\n",
        "vendor/old.py": "import pynvml\n",
        "pyproject.toml": '[tool.rocmlint]\nexclude = ["vendor/"]\n',
        "README.md": "import pynvml\n",
    }
    for name, text in files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text, encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=project, check=True)
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    command = [sys.executable, "-m", "pre_commit", "try-repo", str(hooks), "rocmlint", "--all-files"]
    proc = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=900)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output
    assert "rocmlint" in output and "Failed" in output
    assert "app/monitor.py:1:1: ROCM001" in output
    assert re.search(r"csrc/reduce\.hip:1:\d+: ROCM003", output), output  # matched by name
    assert "CMakeLists.txt:2:1: ROCM303" in output
    assert "vendor/old.py" not in output and "README.md" not in output  # excluded; not a file rocmlint reads
    # Fixed code passes.
    (project / "app" / "monitor.py").write_text("import torch\n", encoding="utf-8")
    (project / "csrc" / "reduce.hip").write_text("__device__ float r(float v) { return v; }\n", encoding="utf-8")
    (project / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.24)\nproject(app LANGUAGES CXX)\n", encoding="utf-8")
    subprocess.run([*GIT, "add", "-A"], cwd=project, check=True)
    clean = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=900)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "Passed" in clean.stdout
