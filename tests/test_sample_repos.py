"""The sample repos: annotations in the files' own comment syntax, checked both ways, and the
full output compared with a stored snapshot.

    # ruleid: ROCM001     the next code line must be flagged with ROCM001
    // ok: ROCM003        the next code line must not be flagged with ROCM003 (gated code)

Every finding must be announced by a `ruleid:` annotation (the annotations are checked with
`--preview`, so that checks in preview are shown too; the snapshot is the default output). To accept a changed output on
purpose, regenerate the snapshots: ROCMLINT_UPDATE_SNAPSHOTS=1 python -m pytest tests/test_sample_repos.py
"""

import json
import os
import re
from pathlib import Path

import pytest

from conftest import REPO, run_cli

SAMPLES = REPO / "sample_repos"
SNAPSHOTS = REPO / "tests" / "snapshots"
ANNOTATION = re.compile(r"^\s*(?:#|//)\s*(ruleid|ok):\s*(ROCM\d{3}(?:\s*,\s*ROCM\d{3})*)\s*$")


def _annotations(root: Path) -> tuple[set, set]:
    """(expected findings, forbidden findings) as sets of (path, line, code)."""
    expected, forbidden = set(), set()
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.suffix in (".md",):
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        pending: list[tuple[str, str]] = []
        for number, line in enumerate(lines, start=1):
            hit = ANNOTATION.match(line)
            if hit:
                pending.extend((hit.group(1), code.strip()) for code in hit.group(2).split(","))
                continue
            relative = path.relative_to(REPO).as_posix()
            for kind, code in pending:
                (expected if kind == "ruleid" else forbidden).add((relative, number, code))
            pending = []
    return expected, forbidden


def _findings(root: Path) -> set:
    # With --preview: the samples show every check, those in preview on some kind of project too.
    proc = run_cli("scan", str(root.relative_to(REPO)), "--format", "json", "--preview", cwd=REPO)
    assert proc.returncode in (0, 1), proc.stderr
    document = json.loads(proc.stdout)
    assert document["skipped"] == []
    return {(f["path"], f["line"], f["code"]) for f in document["findings"]}


@pytest.mark.parametrize("sample", ["nvidia_app", "rocm_port"])
def test_annotations_hold_both_ways(sample):
    expected, forbidden = _annotations(SAMPLES / sample)
    found = _findings(SAMPLES / sample)
    assert expected - found == set(), "annotated `ruleid:` lines that were not flagged"
    assert found - expected == set(), "findings without a `ruleid:` annotation"
    assert found & forbidden == set(), "`ok:` lines that were flagged"


def test_every_check_fires_on_the_nvidia_sample_and_the_port_is_clean():
    from rocmlint.catalog.loader import load_catalog

    found = _findings(SAMPLES / "nvidia_app")
    default_ids = {c.id for c in load_catalog() if c.enabled_by_default}
    assert {code for _, _, code in found} == default_ids
    assert _findings(SAMPLES / "rocm_port") == set()
    _, forbidden = _annotations(SAMPLES / "rocm_port")
    # Each check has its twin in the port (`ok:`), except where the port simply drops the
    # pitfall: no sync inside capture (ROCM010), torch.cuda.is_available() (ROCM102), no
    # constant warpSize (ROCM205), no texture reference (ROCM210), no managed memory (ROCM212),
    # no compiler wavefront-size macro (ROCM217).
    assert {code for _, _, code in forbidden} >= default_ids - {"ROCM010", "ROCM102", "ROCM205", "ROCM210", "ROCM212", "ROCM217"}


@pytest.mark.parametrize("sample", ["nvidia_app", "rocm_port"])
def test_output_matches_the_snapshot(sample):
    proc = run_cli("scan", f"sample_repos/{sample}", cwd=REPO)
    snapshot = SNAPSHOTS / f"{sample}.txt"
    if os.environ.get("ROCMLINT_UPDATE_SNAPSHOTS") == "1":
        snapshot.parent.mkdir(exist_ok=True)
        snapshot.write_text(proc.stdout, encoding="utf-8")
    assert snapshot.exists(), f"no snapshot {snapshot}: run with ROCMLINT_UPDATE_SNAPSHOTS=1 once"
    assert proc.stdout == snapshot.read_text(encoding="utf-8")
    assert proc.returncode == (1 if sample == "nvidia_app" else 0)
