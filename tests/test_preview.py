"""Checks in preview: measured right less than 9 times in 10 on a kind of real project
(docs/precision.md) — projects that build for AMD already, or NVIDIA-only ones being ported —
they run on projects of that kind only with --preview or `preview = true`, as in ruff."""

from __future__ import annotations

import json

import pytest

from rocmlint import engine
from rocmlint.catalog import loader
from rocmlint.catalog.docs import render_markdown
from rocmlint.catalog.loader import CheckFileError, check_by_id, parse_check
from rocmlint.cli import main
from rocmlint.engine import select_checks
from rocmlint.records import replace
from rocmlint.settings import checks_for

PYNVML = "import pynvml\n"


def _measured(check_id: str, *counts) -> object:
    return replace(check_by_id(check_id), measured=tuple(counts))


@pytest.mark.parametrize(
    ("counts", "kinds"),
    [
        ((("amd", 15, 15), ("nvidia", 14, 15)), set()),  # 0.93
        ((("amd", 9, 10),), set()),  # exactly 9 in 10 is enough
        ((("amd", 15, 15), ("nvidia", 13, 15)), {"nvidia"}),  # 0.87 on one kind is not
        ((("amd", 0, 3), ("nvidia", 1, 4)), {"amd", "nvidia"}),
        ((("amd", 0, 0),), set()),  # nothing decided: nothing says it is wrong
        ((), set()),
    ],
)
def test_a_check_is_in_preview_on_a_kind_of_project_where_it_is_right_less_than_9_times_in_10(counts, kinds):
    check = _measured("ROCM001", *counts)
    assert check.preview_kinds == kinds
    assert check.preview is (kinds == {"amd", "nvidia"})


def test_checks_in_preview_everywhere_run_only_with_preview_even_when_named():
    catalog = [_measured("ROCM001", ("amd", 3, 15), ("nvidia", 1, 2)), _measured("ROCM002", ("amd", 3, 15)), check_by_id("ROCM006")]
    assert [c.id for c in select_checks(None, [], catalog)] == ["ROCM002", "ROCM006"]
    assert [c.id for c in select_checks(["ROCM001"], [], catalog)] == []
    assert [c.id for c in select_checks(["ROCM001"], [], catalog, preview=True)] == ["ROCM001"]


def test_measured_counts_are_validated():
    data = loader._yaml_data("ROCM001", (loader.catalog_files()[0]).read_text(encoding="utf-8"))
    data = dict(data, measured={"amd": [16, 15], "sample": "x"})
    with pytest.raises(CheckFileError, match=r"measured.amd must be \[true, decided\]"):
        parse_check(data, "ROCM001.yaml")
    data["measured"] = {"amd": [12, 15], "nvidia": [15, 15], "sample": "2026-11"}
    assert parse_check(data, "ROCM001.yaml").measured == (("amd", 12, 15), ("nvidia", 15, 15))


def test_docs_say_where_a_check_is_in_preview_and_what_was_measured():
    page = render_markdown(_measured("ROCM001", ("amd", 12, 15), ("nvidia", 15, 15)))
    assert "**Preview on projects that build for AMD**: measured right on projects that build for AMD 12/15, NVIDIA-only projects 15/15" in page
    assert "Measured right on projects that build for AMD 15/15" in render_markdown(_measured("ROCM001", ("amd", 15, 15)))


@pytest.fixture
def rocm001_in_preview_on_amd_projects(monkeypatch):
    catalog = tuple(_measured(c.id, ("amd", 1, 15), ("nvidia", 15, 15)) if c.id == "ROCM001" else c for c in loader.load_catalog())
    monkeypatch.setattr(loader, "load_catalog", lambda: catalog)
    monkeypatch.setattr(engine, "load_catalog", lambda: catalog)
    monkeypatch.setattr(loader, "check_by_id", lambda check_id: next((c for c in catalog if c.id == check_id), None))
    checks_for.cache_clear()
    yield
    checks_for.cache_clear()


def _scan(capsys, *args) -> tuple[list[tuple[str, str]], dict, str]:
    assert main(["scan", *args, "--format", "json", "--no-cache", "--show-gated"]) in (0, 1)
    out, err = capsys.readouterr()
    document = json.loads(out)
    gated = {f["path"]: f["gate"] for f in document["gated"]}
    return sorted((f["path"], f["code"]) for f in document["findings"]), gated, err


def test_a_check_in_preview_on_amd_projects_runs_on_projects_being_ported(tmp_path, monkeypatch, capsys, rocm001_in_preview_on_amd_projects):
    (tmp_path / "ported").mkdir()
    (tmp_path / "ported" / "setup.py").write_text("from setuptools import setup\nsetup(name='ported')\n")
    (tmp_path / "ported" / "mon.py").write_text(PYNVML)
    (tmp_path / "dual").mkdir()
    (tmp_path / "dual" / "setup.py").write_text("import torch\nIS_ROCM = torch.version.hip is not None\n")
    (tmp_path / "dual" / "mon.py").write_text(PYNVML)
    monkeypatch.chdir(tmp_path)
    found, gated, err = _scan(capsys, "ported", "dual")
    assert found == [("ported/mon.py", "ROCM001")] and err == ""
    assert gated["dual/mon.py"] == "preview on projects that build for AMD: measured right 1/15 there (--preview runs it)"
    assert _scan(capsys, "ported", "dual", "--preview")[0] == [("dual/mon.py", "ROCM001"), ("ported/mon.py", "ROCM001")]
    configured = tmp_path / "configured"  # a new folder: configurations found are kept per folder
    configured.mkdir()
    (configured / "pyproject.toml").write_text("[tool.rocmlint]\npreview = true\n")
    (configured / "setup.py").write_text("IS_HIP = True\n")
    (configured / "mon.py").write_text(PYNVML)
    monkeypatch.chdir(configured)
    assert _scan(capsys, ".")[0] == [("mon.py", "ROCM001")]
    assert _scan(capsys, ".", "--no-preview")[0] == []


def test_naming_a_check_in_preview_everywhere_says_it_needs_preview(tmp_path, monkeypatch, capsys):
    catalog = tuple(_measured(c.id, ("amd", 1, 15), ("nvidia", 1, 15)) if c.id == "ROCM001" else c for c in loader.load_catalog())
    monkeypatch.setattr(loader, "load_catalog", lambda: catalog)
    monkeypatch.setattr(engine, "load_catalog", lambda: catalog)
    monkeypatch.setattr(loader, "check_by_id", lambda check_id: next((c for c in catalog if c.id == check_id), None))
    checks_for.cache_clear()
    try:
        monkeypatch.chdir(tmp_path)
        (tmp_path / "a.py").write_text(PYNVML)
        found, _, err = _scan(capsys, "a.py", "--select", "ROCM001")
        assert found == []
        assert "ROCM001 is in preview and does not run (measured right on projects that build for AMD 1/15, NVIDIA-only projects 1/15)" in err
    finally:
        checks_for.cache_clear()


def test_preview_must_be_true_or_false(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(PYNVML)
    (tmp_path / "pyproject.toml").write_text("[tool.rocmlint]\npreview = 1\n")
    assert main(["scan", "a.py"]) == 2
    assert "[tool.rocmlint] preview must be true or false, got 1" in capsys.readouterr().err


def test_the_flake8_plugin_leaves_out_what_the_scanner_gates_as_preview(tmp_path, monkeypatch, rocm001_in_preview_on_amd_projects):
    import ast

    from rocmlint.flake8_plugin import Flake8Checker

    for project, setup in (("ported", "from setuptools import setup\n"), ("dual", "IS_ROCM = True\n")):
        (tmp_path / project).mkdir()
        (tmp_path / project / "setup.py").write_text(setup)
        (tmp_path / project / "mon.py").write_text(PYNVML)
    monkeypatch.chdir(tmp_path)

    def codes(path: str) -> list[str]:
        checker = Flake8Checker(ast.parse(PYNVML), path, [PYNVML])
        return [message.split()[0] for _, _, message, _ in checker.run()]

    assert codes("ported/mon.py") == ["ROCM001"]
    assert codes("dual/mon.py") == []
