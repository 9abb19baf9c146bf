"""[tool.rocmlint] in pyproject.toml: found, validated, applied."""

import json

import pytest

from conftest import link_maze, run_cli
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


def test_a_folder_reached_through_a_link_takes_the_configuration_above_its_real_place(tmp_path):
    # The configuration is looked for above where a folder really is, as Path.resolve finds it.
    real = tmp_path / "real" / "project"
    (real / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "real" / "rocmlint.toml").write_text('ignore = ["ROCM001"]\n')
    (tmp_path / "links").mkdir()
    (tmp_path / "links" / "project").symlink_to(real)
    (tmp_path / "links" / "up").symlink_to("..")
    (tmp_path / "links" / "chain").symlink_to("project")
    (tmp_path / "links" / "dangling").symlink_to("missing")
    for folder in ("links/project/src/pkg", "links/chain/src", "links/up/real/project/src", "links/up/links/chain/src/pkg"):
        assert find_config(tmp_path / folder).path == tmp_path / "real" / "rocmlint.toml", folder
    assert find_config(tmp_path / "links").path is None
    assert find_config(tmp_path / "links" / "dangling" / "sub").path is None


def test_real_folder_is_realpath(tmp_path):
    import os
    import random

    from rocmlint.config import _real_folder

    names = link_maze(tmp_path)
    rng = random.Random(7)
    for _ in range(400):
        folder = os.path.join(str(tmp_path), *(rng.choice(names) for _ in range(rng.randint(1, 6))))
        _real_folder.cache_clear()
        assert _real_folder(folder) == os.path.realpath(folder), folder


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
    from rocmlint.catalog.arch_facts import arch_facts
    from rocmlint.targets import known_targets, target

    for name in known_targets():
        facts, entry = arch_facts(name), target(name)
        assert (facts.wave_size, facts.fp8, facts.lds_kib) == (entry.wave_size, entry.fp8 or "none", entry.lds_kib), name


# --- as in ruff: each file with its nearest configuration ----------------------------------


def _scan_codes(tmp_path, *args):
    proc = run_cli("scan", *args, "--format", "json", cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    return sorted((f["path"], f["code"]) for f in json.loads(proc.stdout)["findings"])


def test_each_file_is_checked_with_its_nearest_configuration(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.rocmlint]\nignore = ["ROCM001"]\n')
    (tmp_path / "a.py").write_text(PITFALLS)
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "rocmlint.toml").write_text('select = ["ROCM001"]\n')
    (sub / "b.py").write_text(PITFALLS)
    # A pyproject.toml without [tool.rocmlint] is not a configuration: the search goes on.
    deeper = sub / "pkg"
    deeper.mkdir()
    (deeper / "pyproject.toml").write_text('[project]\nname = "pkg"\n')
    (deeper / "c.py").write_text(PITFALLS)
    expected = [("a.py", "ROCM002"), ("sub/b.py", "ROCM001"), ("sub/pkg/c.py", "ROCM001")]
    for order in ((".",), ("sub", "a.py"), ("a.py", "sub"), ("sub/pkg/c.py", "sub/b.py", "a.py")):
        assert _scan_codes(tmp_path, *order) == expected, order
    # --config names one file for all; --isolated reads none.
    assert _scan_codes(tmp_path, ".", "--config", "sub/rocmlint.toml") == [
        ("a.py", "ROCM001"), ("sub/b.py", "ROCM001"), ("sub/pkg/c.py", "ROCM001")
    ]
    assert len(_scan_codes(tmp_path, ".", "--isolated")) == 6


def test_rocmlint_toml_wins_over_pyproject_in_the_same_folder(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.rocmlint]\nignore = ["ROCM001"]\n')
    (tmp_path / "rocmlint.toml").write_text('ignore = ["ROCM002"]\n')
    (tmp_path / "a.py").write_text(PITFALLS)
    assert _scan_codes(tmp_path, ".") == [("a.py", "ROCM001")]
    assert find_config(tmp_path).path == tmp_path / "rocmlint.toml"


def test_extend_select_per_file_ignores_and_extend_exclude(tmp_path):
    from rocmlint.catalog.loader import check_by_id

    expand_kv = check_by_id("ROCM901").invalid_examples[0].code  # off by default
    (tmp_path / "pyproject.toml").write_text(
        "[tool.rocmlint]\n"
        'extend-select = ["ROCM901"]\n'
        'per-file-ignores = { "tests/**" = ["ROCM001"], "legacy_*.py" = ["ROCM0"] }\n'
        'exclude = ["vendor/"]\n'
        'extend-exclude = ["generated/"]\n'
    )
    for name in ("model.py", "tests/test_model.py", "legacy_io.py", "vendor/v.py", "generated/g.py"):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(PITFALLS + expand_kv)
    assert _scan_codes(tmp_path, ".") == [
        ("legacy_io.py", "ROCM901"), ("legacy_io.py", "ROCM901"),
        ("model.py", "ROCM001"), ("model.py", "ROCM002"), ("model.py", "ROCM901"), ("model.py", "ROCM901"),
        ("tests/test_model.py", "ROCM002"), ("tests/test_model.py", "ROCM901"), ("tests/test_model.py", "ROCM901"),
    ]
    # On the command line: --extend-select adds, --select replaces, --extend-ignore adds.
    assert _scan_codes(tmp_path, "model.py", "--select", "ROCM001", "--extend-select", "ROCM002") == [
        ("model.py", "ROCM001"), ("model.py", "ROCM002")
    ]
    assert _scan_codes(tmp_path, "model.py", "--extend-ignore", "ROCM9,ROCM002") == [("model.py", "ROCM001")]


def test_every_key_that_takes_patterns_matches_them_as_exclude_does(tmp_path):
    """`per-file-ignores` reads gitignore patterns as `exclude` does: git's character classes,
    and a file in a matching folder matches. A key that starts with `!` means, as in ruff,
    every file the rest of the pattern does not match."""
    (tmp_path / "pyproject.toml").write_text(
        "[tool.rocmlint]\n"
        'per-file-ignores = { "[[:digit:]]*.py" = ["ROCM001"], "old/" = ["ROCM002"] }\n'
    )
    for name in ("1_monitor.py", "monitor.py", "old/keep.py"):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(PITFALLS)
    assert _scan_codes(tmp_path, ".") == [
        ("1_monitor.py", "ROCM002"), ("monitor.py", "ROCM001"), ("monitor.py", "ROCM002"), ("old/keep.py", "ROCM001"),
    ]
    (tmp_path / "pyproject.toml").write_text('[tool.rocmlint]\nper-file-ignores = { "!old/" = ["ROCM002"] }\n')
    assert _scan_codes(tmp_path, ".") == [
        ("1_monitor.py", "ROCM001"), ("monitor.py", "ROCM001"), ("old/keep.py", "ROCM001"), ("old/keep.py", "ROCM002"),
    ]
    (tmp_path / "pyproject.toml").write_text('[tool.rocmlint]\nexclude = ["[[:digit:]]*.py", "old/", "!old/keep.py"]\n')
    assert _scan_codes(tmp_path, ".") == [("monitor.py", "ROCM001"), ("monitor.py", "ROCM002")]


def test_excluded_files_named_on_the_command_line(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.rocmlint]\nexclude = ["vendor/"]\n')
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "v.py").write_text(PITFALLS)
    assert len(_scan_codes(tmp_path, "vendor/v.py")) == 2  # named: scanned, as before
    assert _scan_codes(tmp_path, "vendor/v.py", "--force-exclude") == []  # what pre-commit hooks use


def test_config_and_isolated_together_is_an_error(tmp_path):
    (tmp_path / "a.py").write_text(PITFALLS)
    (tmp_path / "rocmlint.toml").write_text("")
    proc = run_cli("scan", ".", "--config", "rocmlint.toml", "--isolated", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--config and --isolated cannot be used together" in proc.stderr


@pytest.mark.parametrize(
    "name,body,words",
    [
        ("pyproject.toml", "tool = 5\n[project]\nname = \"rocmlint-user\"\n", "`tool` must be a table"),
        ("pyproject.toml", "[tool]\nrocmlint = 5\n", "[tool.rocmlint] must be a table"),
        ("pyproject.toml", "[tool.rocmlint]\nper-file-ignores = [\"tests/\"]\n", "[tool.rocmlint] per-file-ignores must be a table"),
        ("pyproject.toml", "[tool.rocmlint]\nper-file-ignores = { \"t/\" = [\"ROCM555\"] }\n",
         "[tool.rocmlint] per-file-ignores 't/': unknown check or prefix 'ROCM555'"),
        ("pyproject.toml", "[tool.rocmlint]\nextend-select = [\"XYZ\"]\n", "[tool.rocmlint] extend-select: unknown check or prefix 'XYZ'"),
        ("pyproject.toml", "[tool.rocmlint]\nextend-exclude = \"gen/\"\n", "[tool.rocmlint] extend-exclude must be a list of strings"),
        ("pyproject.toml", "[tool.rocmlint]\nmax-file-size = -1\n", "[tool.rocmlint] max-file-size must be 0 or more"),
        ("pyproject.toml", "[tool.rocmlint]\nmax-file-size = true\n", "[tool.rocmlint] max-file-size must be a number"),
        ("rocmlint.toml", "selct = []\n", "rocmlint.toml: unknown key selct"),
        ("rocmlint.toml", "select = 5\n", "rocmlint.toml: select must be a list of strings"),
        ("rocmlint.toml", b"select = [\"\xff\"]\n", "not valid UTF-8"),
    ],
)
def test_bad_configuration_names_file_and_key_without_a_traceback(tmp_path, name, body, words):
    sub = tmp_path / "sub"  # a nested configuration: found for the file under it
    sub.mkdir()
    (sub / name).write_bytes(body if isinstance(body, bytes) else body.encode())
    (sub / "a.py").write_text(PITFALLS)
    (tmp_path / "b.py").write_text(PITFALLS)
    for args in (("sub",), ("b.py", "sub/a.py"), ("--config", f"sub/{name}", "b.py")):
        proc = run_cli("scan", *args, cwd=tmp_path)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
        assert str(sub / name) in proc.stderr or f"sub/{name}" in proc.stderr, proc.stderr
        assert words in proc.stderr, proc.stderr
