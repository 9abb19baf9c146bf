"""The project's own flake8 configuration (setup.cfg), rocmlint's plugin included, holds for the
project itself: real flake8 with pycodestyle, pyflakes and the plugin finds nothing."""

import subprocess
import sys

from conftest import REPO


def test_flake8_with_the_plugin_passes_on_the_project():
    plugins = subprocess.run([sys.executable, "-m", "flake8", "--version"], capture_output=True, text=True, cwd=REPO)
    assert "rocmlint:" in plugins.stdout  # the plugin runs too, reading setup.cfg's rocm options
    proc = subprocess.run([sys.executable, "-m", "flake8"], capture_output=True, text=True, cwd=REPO, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == "" and "Traceback" not in proc.stderr


def test_setup_cfg_selects_rocmlint_and_leaves_the_sample_repos_out():
    import configparser

    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg")
    assert config["flake8"]["extend-select"] == "ROCM"
    assert "sample_repos" in config["flake8"]["extend-exclude"]
    # Without the exclusion the plugin does report the samples' pitfalls: the run above is not
    # clean because the plugin is silent.
    proc = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "ROCM", "sample_repos/nvidia_app/fastllm/gpu_monitor.py"],
        capture_output=True, text=True, cwd=REPO,
    )
    assert proc.returncode == 1 and "ROCM001" in proc.stdout
