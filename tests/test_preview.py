"""Checks in preview: measured right less than 9 times in 10 on some kind of real project
(docs/precision.md), they run only with --preview or `preview = true`, as in ruff."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from rocmlint.catalog import loader
from rocmlint.catalog.docs import render_markdown
from rocmlint.catalog.loader import CheckFileError, check_by_id, parse_check
from rocmlint.cli import main
from rocmlint import engine
from rocmlint.engine import select_checks
from rocmlint.settings import checks_for

PYNVML = "import pynvml\n"


def _measured(check_id: str, *counts) -> object:
    return replace(check_by_id(check_id), measured=tuple(counts))


@pytest.mark.parametrize(
    ("counts", "preview"),
    [
        ((("amd", 15, 15), ("nvidia", 14, 15)), False),  # 0.93
        ((("amd", 9, 10),), False),  # exactly 9 in 10 is enough
        ((("amd", 15, 15), ("nvidia", 13, 15)), True),  # 0.87 on one kind is not
        ((("amd", 0, 3), ("nvidia", 0, 0)), True),
        ((("amd", 0, 0),), False),  # nothing decided: nothing says it is wrong
        ((), False),
    ],
)
def test_a_check_is_in_preview_when_it_is_right_less_than_9_times_in_10_on_a_kind(counts, preview):
    assert _measured("ROCM001", *counts).preview is preview


def test_checks_in_preview_run_only_with_preview_even_when_named():
    catalog = [_measured("ROCM001", ("amd", 3, 15)), check_by_id("ROCM002")]
    assert [c.id for c in select_checks(None, [], catalog)] == ["ROCM002"]
    assert [c.id for c in select_checks(["ROCM001"], [], catalog)] == []
    assert [c.id for c in select_checks(["ROCM001"], [], catalog, preview=True)] == ["ROCM001"]
    assert [c.id for c in select_checks(None, [], catalog, preview=True)] == ["ROCM001", "ROCM002"]


def test_measured_counts_are_validated():
    data = loader._yaml_data("ROCM001", (loader.catalog_files()[0]).read_text(encoding="utf-8"))
    data = dict(data, measured={"amd": [16, 15], "sample": "x"})
    with pytest.raises(CheckFileError, match=r"measured.amd must be \[true, decided\]"):
        parse_check(data, "ROCM001.yaml")
    data["measured"] = {"amd": [12, 15], "nvidia": [15, 15], "sample": "2026-11"}
    assert parse_check(data, "ROCM001.yaml").measured == (("amd", 12, 15), ("nvidia", 15, 15))


def test_docs_say_a_check_is_in_preview_and_what_was_measured():
    page = render_markdown(_measured("ROCM001", ("amd", 12, 15), ("nvidia", 15, 15)))
    assert "**Preview**: measured right on projects that build for AMD 12/15, NVIDIA-only projects 15/15" in page
    assert "Measured right on projects that build for AMD 15/15" in render_markdown(_measured("ROCM001", ("amd", 15, 15)))


@pytest.fixture
def rocm001_in_preview(monkeypatch):
    catalog = tuple(_measured(c.id, ("amd", 1, 15)) if c.id == "ROCM001" else c for c in loader.load_catalog())
    monkeypatch.setattr(loader, "load_catalog", lambda: catalog)
    monkeypatch.setattr(engine, "load_catalog", lambda: catalog)
    monkeypatch.setattr(loader, "check_by_id", lambda check_id: next((c for c in catalog if c.id == check_id), None))
    checks_for.cache_clear()
    yield
    checks_for.cache_clear()


def _codes(capsys, *args) -> tuple[list[str], str]:
    assert main(["scan", *args, "--format", "json", "--no-cache"]) in (0, 1)
    out, err = capsys.readouterr()
    return sorted(f["code"] for f in json.loads(out)["findings"]), err


def test_preview_on_the_command_line_and_in_the_configuration(tmp_path, monkeypatch, capsys, rocm001_in_preview):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(PYNVML)
    assert _codes(capsys, "a.py") == ([], "")
    assert _codes(capsys, "a.py", "--preview")[0] == ["ROCM001"]
    codes, err = _codes(capsys, "a.py", "--select", "ROCM001")
    assert codes == []
    assert "ROCM001 is in preview and does not run (measured right on projects that build for AMD 1/15)" in err
    configured = tmp_path / "configured"  # a new folder: configurations found are kept per folder
    configured.mkdir()
    (configured / "pyproject.toml").write_text("[tool.rocmlint]\npreview = true\n")
    (configured / "a.py").write_text(PYNVML)
    monkeypatch.chdir(configured)
    assert _codes(capsys, "a.py", "--select", "ROCM001") == (["ROCM001"], "")
    assert _codes(capsys, "a.py", "--no-preview")[0] == []


def test_preview_must_be_true_or_false(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(PYNVML)
    (tmp_path / "pyproject.toml").write_text("[tool.rocmlint]\npreview = 1\n")
    assert main(["scan", "a.py"]) == 2
    assert "[tool.rocmlint] preview must be true or false, got 1" in capsys.readouterr().err
