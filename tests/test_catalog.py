"""Tests generated from the check catalog: every check's own examples are its tests.

- every invalid example is flagged on exactly the stated lines (and nowhere else);
- every valid example stays silent;
- every `fixed:` is reproduced exactly by the automatic rewrite (unsafe rewrites included);
plus rules about the checks themselves.
"""

import importlib
import re
from pathlib import Path

import pytest

from rocmlint.catalog.loader import catalog_files, load_catalog
from rocmlint.engine import check_source
from rocmlint.fixes.edits import apply_fixes
from rocmlint.source import SourceFile

REPO = Path(__file__).resolve().parent.parent
CATALOG = load_catalog()
DEFAULT_FILE = {"python": "example.py", "cpp": "example.cu"}


def _source(check, example) -> SourceFile:
    path = example.file or DEFAULT_FILE.get(check.languages[0], "example.txt")
    from rocmlint.files.languages import language_of

    # Build-file checks look at the example's neighbours (the project `pip install .` installs,
    # a ROCm Dockerfile beside a default one): examples name paths inside this repository.
    return SourceFile(str(REPO / path), example.code, language_of(path) or check.languages[0])


INVALID = [pytest.param(c, e, id=f"{c.id}-invalid-{i}") for c in CATALOG for i, e in enumerate(c.invalid_examples)]
VALID = [pytest.param(c, e, id=f"{c.id}-valid-{i}") for c in CATALOG for i, e in enumerate(c.valid_examples)]
FIXED = [
    pytest.param(c, e, id=f"{c.id}-fixed-{i}")
    for c in CATALOG
    for i, e in enumerate(c.invalid_examples)
    if e.fixed is not None
]


@pytest.mark.parametrize("check,example", INVALID)
def test_invalid_example_is_flagged_on_its_lines(check, example):
    findings, problems = check_source(_source(check, example), [check])
    assert problems == []
    assert sorted({f.line for f in findings}) == sorted(example.lines), [(f.line, f.message) for f in findings]
    assert all(f.check_id == check.id for f in findings)
    assert all("$" not in f.message for f in findings), "message has an unfilled capture"


@pytest.mark.parametrize("check,example", VALID)
def test_valid_example_is_silent(check, example):
    findings, problems = check_source(_source(check, example), [check])
    assert problems == []
    assert findings == [], [(f.line, f.message) for f in findings]


@pytest.mark.parametrize("check,example", FIXED)
def test_fixed_example_is_reproduced_by_the_rewrite(check, example):
    findings, _ = check_source(_source(check, example), [check])
    fixed, applied = apply_fixes(example.code, findings, unsafe=True)
    assert applied >= 1
    assert fixed == example.fixed
    # The fixed code is itself clean.
    again, _ = check_source(SourceFile("fixed", fixed, _source(check, example).language), [check])
    assert again == []


# --- rules about the checks -------------------------------------------------------------------


def test_ids_are_unique_and_files_are_named_id_dash_name():
    ids = [c.id for c in CATALOG]
    assert len(ids) == len(set(ids))
    assert sorted(p.name for p in catalog_files()) == sorted(f"{c.id}-{c.name}.yaml" for c in CATALOG)


@pytest.mark.parametrize("check", CATALOG, ids=lambda c: c.id)
def test_check_is_documented_and_has_enough_examples(check):
    assert "\n" not in check.message
    assert len(check.rationale.split()) >= 20, "rationale should say why, with its source"
    assert check.description
    assert check.fix is not None and check.fix.snippet.strip()
    assert len(check.invalid_examples) >= 3
    assert len(check.valid_examples) >= 3
    assert check.references
    if check.fix.rewrite is not None:
        assert any(e.fixed is not None for e in check.invalid_examples), "a rewrite needs a `fixed:` example"
    if not re.match(r"^ROCM9\d\d$", check.id):
        assert check.enabled_by_default


@pytest.mark.parametrize("check", [c for c in CATALOG if c.fix and c.fix.runtime], ids=lambda c: c.id)
def test_runtime_target_is_importable(check):
    module_name, _, attr = check.fix.runtime.rpartition(".")
    module = importlib.import_module(module_name)
    assert callable(getattr(module, attr))
