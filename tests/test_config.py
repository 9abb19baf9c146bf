"""[tool.rocmlint] in pyproject.toml: found, validated, applied."""

import json

import pytest

from conftest import run_cli
from rocmlint.config import ConfigError, find_config, load_config_file

PITFALLS = 'import pynvml\nimport torch\nm = torch.compile(m, mode="reduce-overhead")\n'


def _codes(proc):
    return [f["code"] for f in json.loads(proc.stdout)["findings"]]


def test_select_ignore_exclude_from_pyproject(tmp_path):
    (tmp_path / "a.py").write_text(PITFALLS)
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "b.py").write_text(PITFALLS)
    (tmp_path / "pyproject.toml").write_text('[tool.rocmlint]\nselect = ["ROCM0"]\nignore = ["ROCM001"]\nexclude = ["vendor/"]\n')
    proc = run_cli("scan", ".", "--format", "json", cwd=tmp_path)
    assert _codes(proc) == ["ROCM002"]
    # Command-line lists replace the configured ones.
    proc = run_cli("scan", ".", "--format", "json", "--ignore", "ROCM002", cwd=tmp_path)
    assert _codes(proc) == ["ROCM001"]
    # --isolated ignores the file.
    proc = run_cli("scan", ".", "--format", "json", "--isolated", cwd=tmp_path)
    assert _codes(proc) == ["ROCM001", "ROCM002", "ROCM001", "ROCM002"]


def test_config_is_found_from_a_subdirectory(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.rocmlint]\nignore = ["ROCM001"]\n')
    sub = tmp_path / "src" / "pkg"
    sub.mkdir(parents=True)
    (sub / "a.py").write_text(PITFALLS)
    assert find_config(sub).path == tmp_path / "pyproject.toml"
    proc = run_cli("scan", "src", "--format", "json", cwd=tmp_path)
    assert _codes(proc) == ["ROCM002"]


def test_search_stops_at_the_repository_root(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.rocmlint]\nignore = ["ROCM001"]\n')
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    assert find_config(repo).path is None


def test_unknown_key_names_file_and_key(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.rocmlint]\nselct = ["ROCM001"]\n')
    with pytest.raises(ConfigError, match=r"pyproject.toml: unknown key \[tool.rocmlint\] selct"):
        load_config_file(tmp_path / "pyproject.toml")
    (tmp_path / "a.py").write_text(PITFALLS)
    proc = run_cli("scan", ".", cwd=tmp_path)
    assert proc.returncode == 2
    assert "unknown key [tool.rocmlint] selct" in proc.stderr


@pytest.mark.parametrize(
    "body,words",
    [
        ("select = \"ROCM001\"", "select must be a list of strings"),
        ("max-file-size = \"big\"", "max-file-size must be a number"),
        ("ignore = [\"ROCM555\"]", "unknown check or prefix"),
        ("select = [", "cannot read"),
    ],
)
def test_bad_values_are_usage_errors(tmp_path, body, words):
    (tmp_path / "pyproject.toml").write_text(f"[tool.rocmlint]\n{body}\n")
    (tmp_path / "a.py").write_text(PITFALLS)
    proc = run_cli("scan", ".", cwd=tmp_path)
    assert proc.returncode == 2
    assert words in proc.stderr


def test_explicit_config_file(tmp_path):
    (tmp_path / "a.py").write_text(PITFALLS)
    (tmp_path / "other.toml").write_text('[tool.rocmlint]\nselect = ["ROCM002"]\n')
    proc = run_cli("scan", ".", "--format", "json", "--config", "other.toml", cwd=tmp_path)
    assert _codes(proc) == ["ROCM002"]


def test_arch_facts_read_the_amd_target_table():
    from rocmlint.arch_facts import arch_facts
    from rocmlint.targets import known_targets, target

    for name in known_targets():
        facts, entry = arch_facts(name), target(name)
        assert (facts.wave_size, facts.fp8, facts.lds_kib) == (entry.wave_size, entry.fp8 or "none", entry.lds_kib), name
