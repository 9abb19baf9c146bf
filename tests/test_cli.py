"""The `rocmlint` command as a user runs it: exit codes, formats, options, fixes."""

import json

from conftest import PITFALLS, run_cli
from conftest import write_project as _project


def test_findings_exit_1_with_text_lines(tmp_path):
    _project(tmp_path)
    proc = run_cli("scan", ".", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("train.py:1:1: ROCM001 ")
    assert lines[1].startswith("train.py:4:9: ROCM002 [*] ")
    assert "Found 2 findings in 1 file (1 file checked)." in proc.stdout


def test_clean_tree_exits_0(tmp_path):
    _project(tmp_path, "import torch\nprint(torch.cuda.is_available())\n")
    proc = run_cli("scan", str(tmp_path))
    assert proc.returncode == 0
    assert "Found 0 findings (1 file checked)." in proc.stdout


def test_exit_zero_and_output_file(tmp_path):
    _project(tmp_path)
    out = tmp_path / "report.json"
    proc = run_cli("scan", ".", "--format", "json", "--output", str(out), "--exit-zero", cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stdout == ""
    document = json.loads(out.read_text())
    assert [f["code"] for f in document["findings"]] == ["ROCM001", "ROCM002"]


def test_json_fields(tmp_path):
    _project(tmp_path)
    proc = run_cli("scan", ".", "--format", "json", cwd=tmp_path)
    document = json.loads(proc.stdout)
    first, second = document["findings"]
    assert (first["path"], first["line"], first["column"], first["end_line"], first["end_column"]) == ("train.py", 1, 1, 1, 14)
    assert first["fix"] is None
    assert second["fix"]["safety"] == "safe"
    assert second["fix"]["edits"][0]["replacement"] == '("default" if torch.version.hip else "reduce-overhead")'
    assert document["files_checked"] == 1 and document["skipped"] == []


def test_select_and_ignore(tmp_path):
    _project(tmp_path)
    only_1 = run_cli("scan", ".", "--format", "json", "--select", "ROCM001", cwd=tmp_path)
    assert [f["code"] for f in json.loads(only_1.stdout)["findings"]] == ["ROCM001"]
    without_1 = run_cli("scan", ".", "--format", "json", "--ignore", "ROCM001", cwd=tmp_path)
    assert [f["code"] for f in json.loads(without_1.stdout)["findings"]] == ["ROCM002"]
    prefix = run_cli("scan", ".", "--format", "json", "--select", "ROCM00", "--ignore", "ROCM002", cwd=tmp_path)
    assert [f["code"] for f in json.loads(prefix.stdout)["findings"]] == ["ROCM001"]


def test_usage_errors_exit_2(tmp_path):
    _project(tmp_path)
    unknown = run_cli("scan", ".", "--select", "ROCM777", cwd=tmp_path)
    assert unknown.returncode == 2 and "unknown check or prefix: 'ROCM777'" in unknown.stderr
    missing = run_cli("scan", "no/such/dir", cwd=tmp_path)
    assert missing.returncode == 2 and "no such file or directory" in missing.stderr
    bad_flag = run_cli("scan", "--format", "xml", cwd=tmp_path)
    assert bad_flag.returncode == 2
    assert run_cli(cwd=tmp_path).returncode == 2
    unsafe_alone = run_cli("scan", ".", "--unsafe-fixes", cwd=tmp_path)
    assert unsafe_alone.returncode == 2 and "--unsafe-fixes needs --fix" in unsafe_alone.stderr
    explain = run_cli("explain", "ROCM999", cwd=tmp_path)
    assert explain.returncode == 2 and "unknown check" in explain.stderr


def test_github_annotations(tmp_path):
    _project(tmp_path)
    proc = run_cli("scan", ".", "--format", "github", cwd=tmp_path)
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("::error file=train.py,line=1,col=1,endLine=1,endColumn=14,title=ROCM001::ROCM001 ")
    assert lines[1].startswith("::warning file=train.py,line=4,col=9,")


def test_github_annotations_most_severe_first_ten_of_each_kind(tmp_path):
    # 12 errors (ROCM001) after 12 warnings (ROCM002) in file order, and a file not scanned.
    _project(tmp_path, 'import torch\n' + 'model = torch.compile(model, mode="reduce-overhead")\n' * 12, name="a.py")
    _project(tmp_path, "import pynvml\n" * 12, name="b.py")
    (tmp_path / "c.py").write_bytes(b"\0binary")
    proc = run_cli("scan", ".", "--no-cache", "--format", "github", cwd=tmp_path)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    kinds = [line.split(" ", 1)[0] for line in lines if line.startswith("::")]
    assert kinds == ["::error"] * 10 + ["::warning"] * 10
    assert lines[0].startswith("::error file=b.py,line=1,")
    plain = [line for line in lines if not line.startswith("::")]
    assert plain[:2] == [
        "b.py:11:1: ROCM001 " + plain[0].split(" ROCM001 ", 1)[1],
        "b.py:12:1: ROCM001 " + plain[1].split(" ROCM001 ", 1)[1],
    ]
    assert plain[-1] == (
        "rocmlint: 5 not shown as annotations (2 errors, 3 warnings): GitHub shows 10 of each kind per step; they are "
        "listed above, and code scanning (--format sarif) shows every one"
    )
    assert "c.py: skipped: binary file (NUL byte)" in plain
    assert not any(line.lstrip().startswith("::") for line in plain)


def test_fix_applies_safe_rewrites_and_rescans(tmp_path):
    _project(tmp_path)
    proc = run_cli("scan", ".", "--fix", cwd=tmp_path)
    assert "Fixed 1 finding." in proc.stderr
    assert proc.returncode == 1  # ROCM001 has no automatic fix and remains
    assert "ROCM002" not in proc.stdout
    text = (tmp_path / "train.py").read_text()
    assert 'mode=("default" if torch.version.hip else "reduce-overhead")' in text
    again = run_cli("scan", ".", "--select", "ROCM002", cwd=tmp_path)
    assert again.returncode == 0


def test_fix_keeps_crlf_line_endings(tmp_path):
    (tmp_path / "train.py").write_bytes(PITFALLS.replace("\n", "\r\n").encode())
    run_cli("scan", ".", "--fix", cwd=tmp_path)
    data = (tmp_path / "train.py").read_bytes()
    assert b"torch.version.hip" in data
    assert data.count(b"\r\n") == PITFALLS.count("\n") and b"\n" not in data.replace(b"\r\n", b"")


def test_show_fix_prints_the_snippet(tmp_path):
    _project(tmp_path)
    proc = run_cli("scan", ".", "--show-fix", "--select", "ROCM001", cwd=tmp_path)
    assert "    fix: Guard the import and the initialisation, and detect GPUs through torch" in proc.stdout
    assert "    |     import pynvml  # optional: NVIDIA-only metrics" in proc.stdout


def test_rules_and_explain(tmp_path):
    rules = run_cli("rules", cwd=tmp_path)
    assert rules.returncode == 0
    assert rules.stdout.splitlines()[0].startswith("ROCM001  error")
    as_json = json.loads(run_cli("rules", "--format", "json", cwd=tmp_path).stdout)
    assert {"ROCM001", "ROCM002"} <= {r["id"] for r in as_json}
    explain = run_cli("explain", "rocm002", cwd=tmp_path)
    assert explain.returncode == 0
    for heading in ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety", "References"):
        assert f"\n{heading}\n" in explain.stdout
    markdown = run_cli("explain", "ROCM001", "--format", "markdown", cwd=tmp_path).stdout
    assert markdown.startswith("# ROCM001: ") and "```python" in markdown


def test_version_and_help(tmp_path):
    version = run_cli("--version", cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("rocmlint ")
    help_text = run_cli("scan", "--help", cwd=tmp_path).stdout
    for option in ("--format", "--select", "--ignore", "--exclude", "--exit-zero", "--fix", "--output"):
        assert option in help_text


def test_explicit_file_of_unknown_type_is_reported(tmp_path):
    (tmp_path / "notes.txt").write_text("import pynvml\n")
    proc = run_cli("scan", "notes.txt", cwd=tmp_path)
    assert proc.returncode == 0
    assert "notes.txt: skipped: not a file type rocmlint checks" in proc.stderr
