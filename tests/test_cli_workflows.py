"""What users of ruff and of CI services expect from the command line: --statistics, --diff,
standard input, GitLab and JUnit reports, docs URLs, --show-fix with the rewrite, --add-noqa,
baselines that survive moved lines, and a progress line on a terminal only."""

import json
import os
import subprocess
import sys
from xml.etree import ElementTree

from conftest import PITFALLS, REPO, run_cli
from conftest import write_project as _project


def test_json_findings_carry_the_checks_docs_url(tmp_path):
    from rocmlint import REPOSITORY_URL

    _project(tmp_path)
    findings = json.loads(run_cli("scan", ".", "--format", "json", cwd=tmp_path).stdout)["findings"]
    assert [f["url"] for f in findings] == [
        f"{REPOSITORY_URL}/blob/main/checks/ROCM001-pynvml-top-level-import.yaml",
        f"{REPOSITORY_URL}/blob/main/checks/ROCM002-compile-reduce-overhead.yaml",
    ]
    for f in findings:  # the file the URL names is in the repository
        assert (REPO / "checks" / f["url"].rsplit("/", 1)[1]).is_file()


def test_repository_url_matches_pyproject():
    import tomllib

    from rocmlint import REPOSITORY_URL

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["urls"]["Repository"] == REPOSITORY_URL


def test_statistics(tmp_path):
    _project(tmp_path, PITFALLS + "import pynvml as again\n")
    proc = run_cli("scan", ".", "--statistics", cwd=tmp_path)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[0] == "2  ROCM001       pynvml imported or initialised at import time without a fallback"
    assert lines[1] == '1  ROCM002  [*]  torch.compile with mode="reduce-overhead" on every platform'
    assert lines[2].startswith("Found 3 findings in 1 file")
    rows = json.loads(run_cli("scan", ".", "--statistics", "--format", "json", cwd=tmp_path).stdout)
    assert [(r["code"], r["count"], r["fixable"]) for r in rows] == [("ROCM001", 2, 0), ("ROCM002", 1, 1)]
    wrong = run_cli("scan", ".", "--statistics", "--format", "sarif", cwd=tmp_path)
    assert wrong.returncode == 2


def test_diff_shows_fixes_and_changes_nothing(tmp_path):
    _project(tmp_path)
    (tmp_path / "crlf.py").write_bytes(PITFALLS.replace("\n", "\r\n").encode())
    proc = run_cli("scan", ".", "--diff", cwd=tmp_path)
    assert proc.returncode == 1 and "Would fix 2 findings." in proc.stderr
    assert proc.stdout.count("--- a/") == 2
    assert '-model = torch.compile(model, mode="reduce-overhead")\n' in proc.stdout
    assert '+model = torch.compile(model, mode=("default" if torch.version.hip else "reduce-overhead"))\n' in proc.stdout
    assert (tmp_path / "train.py").read_text() == PITFALLS  # untouched
    # The diff applies as it is (bytes: CRLF lines stay CRLF in it).
    raw = subprocess.run([sys.executable, "-m", "rocmlint", "scan", ".", "--diff"], cwd=tmp_path, capture_output=True)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "fixes.diff").write_bytes(raw.stdout)
    applied = subprocess.run(["git", "apply", "--whitespace=nowarn", "fixes.diff"], cwd=tmp_path, capture_output=True, text=True)
    assert applied.returncode == 0, applied.stderr
    assert run_cli("scan", ".", "--select", "ROCM002", cwd=tmp_path).returncode == 0
    assert (tmp_path / "crlf.py").read_bytes().count(b"\r\n") == 4
    clean = run_cli("scan", ".", "--diff", "--select", "ROCM001", cwd=tmp_path)
    assert clean.returncode == 0 and clean.stdout == "" and "Would fix 0 findings." in clean.stderr


def test_diff_applies_to_files_with_a_byte_order_mark_or_old_mac_line_ends(tmp_path):
    """Checked with the tools users apply patches with: git apply and patch."""
    bom = b"\xef\xbb\xbf" + PITFALLS.encode()
    (tmp_path / "bom.py").write_bytes(bom)
    (tmp_path / "cr.py").write_bytes(PITFALLS.replace("\n", "\r").encode())
    raw = subprocess.run([sys.executable, "-m", "rocmlint", "scan", ".", "--diff", "--no-cache"], cwd=tmp_path, capture_output=True)
    assert raw.returncode == 1, raw.stderr
    assert raw.stdout.count(b"--- a/") == 2
    assert b"\n \xef\xbb\xbfimport pynvml\n" in raw.stdout  # the hunk's context holds the byte-order mark
    (tmp_path / "fixes.diff").write_bytes(raw.stdout)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    checked = subprocess.run(["git", "apply", "--check", "fixes.diff"], cwd=tmp_path, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    dry = subprocess.run(["patch", "-p1", "--dry-run", "-i", "fixes.diff"], cwd=tmp_path, capture_output=True, text=True)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "malformed" not in dry.stdout + dry.stderr
    applied = subprocess.run(["patch", "-p1", "-i", "fixes.diff"], cwd=tmp_path, capture_output=True, text=True)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert (tmp_path / "bom.py").read_bytes().startswith(b"\xef\xbb\xbfimport pynvml\n")
    assert (tmp_path / "cr.py").read_bytes().count(b"\r") == 4 and b"\n" not in (tmp_path / "cr.py").read_bytes()
    assert run_cli("scan", ".", "--select", "ROCM002", "--no-cache", cwd=tmp_path).returncode == 0


def _stdin(tmp_path, data: bytes, *args):
    return subprocess.run(
        [sys.executable, "-m", "rocmlint", "scan", *args], input=data, cwd=tmp_path, capture_output=True, timeout=120
    )


def test_standard_input(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "rocmlint.toml").write_text('ignore = ["ROCM001"]\n')
    data = PITFALLS.encode()
    named = _stdin(tmp_path, data, "-", "--stdin-filename", "pkg/train.py", "--format", "json")
    document = json.loads(named.stdout)
    # The name gives the language, the configuration (pkg/rocmlint.toml) and the path shown.
    assert [(f["path"], f["code"]) for f in document["findings"]] == [("pkg/train.py", "ROCM002")]
    assert named.returncode == 1
    unnamed = _stdin(tmp_path, data, "-")
    assert unnamed.stdout.decode().startswith("-:1:1: ROCM001 ")
    cuda = _stdin(tmp_path, b"__shfl_xor_sync(0xffffffff, v, 16);\n", "-", "--stdin-filename", "k.cu", "--no-project")
    assert b"k.cu:1:1: ROCM003" in cuda.stdout
    # --fix: the fixed text on standard output, what remains on standard error.
    fixed = _stdin(tmp_path, data, "-", "--stdin-filename", "train.py", "--fix")
    assert fixed.stdout.decode() == PITFALLS.replace('mode="reduce-overhead"', 'mode=("default" if torch.version.hip else "reduce-overhead")')
    assert b"train.py:1:1: ROCM001" in fixed.stderr and fixed.returncode == 1
    diff = _stdin(tmp_path, data, "-", "--stdin-filename", "train.py", "--diff")
    assert diff.stdout.startswith(b"--- a/train.py\n+++ b/train.py\n") and diff.returncode == 1
    binary = _stdin(tmp_path, b"\0\1", "-", "--stdin-filename", "x.py", "--format", "json")
    assert json.loads(binary.stdout)["skipped"] == [{"path": "x.py", "reason": "binary input (NUL byte)", "line": None}]
    wrong = _stdin(tmp_path, data, ".", "--stdin-filename", "x.py")
    assert wrong.returncode == 2 and b"--stdin-filename needs the path `-`" in wrong.stderr


def test_gitlab_code_quality_report(tmp_path):
    (tmp_path / ".git").mkdir()
    _project(tmp_path, PITFALLS + "import pynvml\n", name="src/train.py")
    proc = run_cli("scan", ".", "--format", "gitlab", cwd=tmp_path / "src")  # paths from the repository root
    issues = json.loads(proc.stdout)
    assert [(i["check_name"], i["severity"], i["location"]) for i in issues] == [
        ("ROCM001", "critical", {"path": "src/train.py", "lines": {"begin": 1, "end": 1}}),
        ("ROCM002", "major", {"path": "src/train.py", "lines": {"begin": 4, "end": 4}}),
        ("ROCM001", "critical", {"path": "src/train.py", "lines": {"begin": 5, "end": 5}}),
    ]
    assert all(i["description"].startswith(i["check_name"] + " ") for i in issues)
    prints = [i["fingerprint"] for i in issues]
    assert len(set(prints)) == 3  # GitLab shows one issue per fingerprint
    (tmp_path / "src" / "train.py").write_text("\n\n" + PITFALLS + "import pynvml\n")
    moved = json.loads(run_cli("scan", "src", "--format", "gitlab", cwd=tmp_path).stdout)
    assert [i["fingerprint"] for i in moved] == prints


def test_junit_report(tmp_path):
    _project(tmp_path)
    (tmp_path / "blob.py").write_bytes(b"\0binary")
    (tmp_path / "ctl.py").write_text('import pynvml  # "\x01"\n')
    proc = run_cli("scan", ".", "--format", "junit", cwd=tmp_path)
    assert proc.returncode == 1
    root = ElementTree.fromstring(proc.stdout.encode())
    assert root.tag == "testsuites" and root.get("failures") == "3" and root.get("tests") == "4"
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"train.py", "ctl.py", "files not scanned"}
    failures = [c.find("failure") for c in suites["train.py"].findall("testcase")]
    assert [f.get("type") for f in failures] == ["ROCM001", "ROCM002"]
    assert failures[1].text.startswith("train.py:4:9: ROCM002 ")
    assert suites["files not scanned"].find("testcase/skipped").get("message") == "binary file (NUL byte)"
    clean = run_cli("scan", ".", "--format", "junit", "--select", "ROCM005", cwd=tmp_path)
    root = ElementTree.fromstring(clean.stdout.encode())
    assert root.get("failures") == "0" and root.find("testsuite/testcase") is not None


def test_junit_report_has_what_the_ant_schema_requires(tmp_path):
    """Ant's JUnit schema: each suite with id, package, timestamp (no zone), hostname and time,
    properties first and system-out, system-err last; each case with a time."""
    import re
    import socket

    _project(tmp_path)
    (tmp_path / "blob.py").write_bytes(b"\0binary")
    for args in ((), ("--select", "ROCM005")):
        root = ElementTree.fromstring(run_cli("scan", ".", "--no-cache", "--format", "junit", *args, cwd=tmp_path).stdout.encode())
        assert float(root.get("time")) >= 0
        for number, suite in enumerate(root.findall("testsuite")):
            assert suite.get("id") == str(number) and suite.get("package") == "rocmlint"
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", suite.get("timestamp"))
            assert suite.get("hostname") == socket.gethostname() and float(suite.get("time")) == 0
            children = [child.tag for child in suite]
            assert children[0] == "properties" and children[-2:] == ["system-out", "system-err"]
            assert set(children[1:-2]) == {"testcase"}
            assert all(case.get("time") == "0" for case in suite.findall("testcase"))


def test_show_fix_prints_the_rewrite_of_the_line(tmp_path):
    _project(tmp_path)
    proc = run_cli("scan", ".", "--show-fix", "--select", "ROCM002", cwd=tmp_path)
    lines = proc.stdout.splitlines()
    at = lines.index("    automatic (safe, --fix): Use reduce-overhead on NVIDIA only")
    assert lines[at + 1] == '        4 - model = torch.compile(model, mode="reduce-overhead")'
    assert lines[at + 2] == '        4 + model = torch.compile(model, mode=("default" if torch.version.hip else "reduce-overhead"))'


def test_add_noqa(tmp_path):
    _project(tmp_path, PITFALLS + 'import pynvml; text = """\nwords\n"""\n')
    _project(tmp_path, "__shfl_xor_sync(0xffffffff, v, 16);  // noqa: ROCM201\n", name="k.cu")
    _project(tmp_path, "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\nRUN pip install -e .\n", name="Dockerfile")
    _project(tmp_path, "torch==2.4.0\n", name="requirements.txt")
    before = run_cli("scan", ".", "--no-project", "--format", "json", cwd=tmp_path)
    codes = sorted({f["code"] for f in json.loads(before.stdout)["findings"]})
    proc = run_cli("scan", ".", "--no-project", "--add-noqa", cwd=tmp_path)
    assert "Dockerfile:1: no noqa comment added: in a Dockerfile `#` is a comment only in shell-form RUN lines" in proc.stderr
    assert "train.py:5: no noqa comment added: a comment there would change the file's contents" in proc.stderr
    assert proc.returncode == 1  # those two remain
    train = (tmp_path / "train.py").read_text()
    assert train.startswith("import pynvml  # noqa: ROCM001\n")
    assert 'model = torch.compile(model, mode="reduce-overhead")  # noqa: ROCM002\n' in train
    assert (tmp_path / "k.cu").read_text() == "__shfl_xor_sync(0xffffffff, v, 16);  // noqa: ROCM201, ROCM003\n"
    assert (tmp_path / "requirements.txt").read_text() == "torch==2.4.0  # noqa: ROCM307\n"
    after = json.loads(run_cli("scan", ".", "--no-project", "--format", "json", cwd=tmp_path).stdout)["findings"]
    assert sorted((f["path"], f["line"]) for f in after) == [("Dockerfile", 1), ("train.py", 5)]
    assert codes  # the run had findings of several kinds to begin with
    again = run_cli("scan", ".", "--no-project", "--add-noqa", cwd=tmp_path)
    assert "Added 0 noqa comments" in again.stderr
    assert (tmp_path / "train.py").read_text() == train  # nothing added twice


def test_baseline_hides_recorded_findings_even_when_lines_move(tmp_path):
    _project(tmp_path)
    (tmp_path / "sub").mkdir()
    baseline = tmp_path / "rocmlint-baseline.json"
    wrote = run_cli("scan", ".", "--baseline", "rocmlint-baseline.json", "--write-baseline", cwd=tmp_path)
    assert wrote.returncode == 0 and "Wrote 2 findings to rocmlint-baseline.json." in wrote.stderr
    assert [e["code"] for e in json.loads(baseline.read_text())["findings"]] == ["ROCM001", "ROCM002"]
    # Lines move, a new finding appears; from another directory, the baseline still applies.
    (tmp_path / "train.py").write_text("# header\n\n" + PITFALLS + "import pynvml as nvml\n")
    proc = run_cli("scan", "..", "--baseline", "../rocmlint-baseline.json", cwd=tmp_path / "sub")
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[0].startswith("../train.py:7:1: ROCM001 `import pynvml as nvml`")
    assert "Found 1 finding in 1 file (1 file checked, 2 in the baseline not reported)." in proc.stdout
    fixed = PITFALLS.replace("import pynvml\n", "")
    (tmp_path / "train.py").write_text(fixed)
    assert run_cli("scan", ".", "--baseline", "rocmlint-baseline.json", cwd=tmp_path).returncode == 0
    missing = run_cli("scan", ".", "--baseline", "nope.json", cwd=tmp_path)
    assert missing.returncode == 2 and "--baseline nope.json: no such file" in missing.stderr
    (tmp_path / "bad.json").write_text("[1]")
    bad = run_cli("scan", ".", "--baseline", "bad.json", cwd=tmp_path)
    assert bad.returncode == 2 and "not a rocmlint baseline" in bad.stderr


def test_writing_the_baseline_of_a_subfolder_keeps_the_rest(tmp_path):
    for folder in ("a", "b"):
        _project(tmp_path, PITFALLS, name=f"{folder}/train.py")
    baseline = tmp_path / "baseline.json"
    whole = run_cli("scan", ".", "--no-cache", "--baseline", "baseline.json", "--write-baseline", cwd=tmp_path)
    assert "Wrote 4 findings to baseline.json." in whole.stderr
    # b is fixed in part and rewritten alone: a's entries stay.
    (tmp_path / "b" / "train.py").write_text(PITFALLS.replace("import pynvml\n", ""))
    stale = run_cli("scan", ".", "--no-cache", "--baseline", "baseline.json", cwd=tmp_path)
    assert stale.returncode == 0
    assert "rocmlint: 1 finding in baseline.json no longer found (fixed, or the line changed): --write-baseline drops them" in stale.stderr
    part = run_cli("scan", "b", "--no-cache", "--baseline", "baseline.json", "--write-baseline", cwd=tmp_path)
    assert "Wrote 3 findings to baseline.json (2 kept from files or checks this scan did not cover); dropped 1 no longer found." in part.stderr
    entries = json.loads(baseline.read_text())["findings"]
    assert [(e["path"], e["code"]) for e in entries] == [("a/train.py", "ROCM001"), ("a/train.py", "ROCM002"), ("b/train.py", "ROCM002")]
    # A scan with fewer checks keeps the other checks' entries too.
    run_cli("scan", ".", "--no-cache", "--select", "ROCM002", "--baseline", "baseline.json", "--write-baseline", cwd=tmp_path)
    assert len(json.loads(baseline.read_text())["findings"]) == 3
    assert run_cli("scan", ".", "--no-cache", "--baseline", "baseline.json", cwd=tmp_path).stderr == ""


def test_progress_on_a_terminal_only(tmp_path):
    import pty

    for number in range(30):
        _project(tmp_path, PITFALLS, name=f"m{number}.py")
    controller, terminal = pty.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "rocmlint", "scan", "."], cwd=tmp_path, stdout=subprocess.PIPE, stderr=terminal, timeout=120
        )
        os.close(terminal)
        terminal = None
        seen = b""
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(controller)
        if terminal is not None:
            os.close(terminal)
    assert proc.returncode == 1
    assert b"\rrocmlint: checked 30/30 files" in seen and seen.endswith(b"\r\x1b[K")
    assert b"rocmlint: checked" not in proc.stdout  # the report itself is untouched
    piped = run_cli("scan", ".", cwd=tmp_path)
    assert "checked 30/30" not in piped.stderr
