"""Bad input is reported and skipped; the scan goes on and its output stays valid."""

import json
import os

from conftest import run_cli

GOOD = "import pynvml\n"


def _scan_json(tmp_path, *extra):
    proc = run_cli("scan", ".", "--format", "json", *extra, cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    return proc, json.loads(proc.stdout)


def _setup(tmp_path, name, data: bytes):
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / name).write_bytes(data)


def _assert_skipped_and_scan_went_on(tmp_path, proc, document, name, words):
    assert [f["path"] for f in document["findings"]] == ["good.py"], "the good file is still scanned"
    skipped = {s["path"]: s["reason"] for s in document["skipped"]}
    assert name in skipped and words in skipped[name], skipped
    assert f"{name}" in proc.stderr and words in proc.stderr, "reported on stderr too"


def test_binary_file(tmp_path):
    _setup(tmp_path, "weights.py", b"import pynvml\x00\x00\xff")
    proc, document = _scan_json(tmp_path)
    _assert_skipped_and_scan_went_on(tmp_path, proc, document, "weights.py", "binary")


def test_non_utf8_file(tmp_path):
    _setup(tmp_path, "latin1.py", "# caf\xe9\nimport pynvml\n".encode("latin-1"))
    proc, document = _scan_json(tmp_path)
    _assert_skipped_and_scan_went_on(tmp_path, proc, document, "latin1.py", "not valid UTF-8")
    assert document["skipped"][0]["line"] == 1


def test_unreadable_file(tmp_path):
    _setup(tmp_path, "placeholder.txt", b"")
    # A dangling symlink: the name is there, the content cannot be read (works as root too).
    os.symlink(tmp_path / "gone.py", tmp_path / "dangling.py")
    proc, document = _scan_json(tmp_path)
    _assert_skipped_and_scan_went_on(tmp_path, proc, document, "dangling.py", "cannot read")


def test_huge_file_over_the_size_limit(tmp_path):
    _setup(tmp_path, "generated.py", b"import pynvml\n" + b"x = 1\n" * 200_000)
    proc, document = _scan_json(tmp_path)
    _assert_skipped_and_scan_went_on(tmp_path, proc, document, "generated.py", "over the size limit")
    # The limit is an option: 0 lifts it and the file is scanned.
    _, unlimited = _scan_json(tmp_path, "--max-file-size", "0")
    assert sorted(f["path"] for f in unlimited["findings"]) == ["generated.py", "good.py"]


def test_python_syntax_error(tmp_path):
    _setup(tmp_path, "broken.py", b"import pynvml\ndef f(:\n")
    proc, document = _scan_json(tmp_path)
    _assert_skipped_and_scan_went_on(tmp_path, proc, document, "broken.py", "syntax error")
    assert document["skipped"][0]["line"] == 2


def test_empty_files_are_scanned_quietly(tmp_path):
    _setup(tmp_path, "__init__.py", b"")
    (tmp_path / "empty.py").write_bytes(b"")
    proc, document = _scan_json(tmp_path)
    assert [f["path"] for f in document["findings"]] == ["good.py"]
    assert document["skipped"] == [] and proc.stderr == ""
    assert document["files_checked"] == 3


def test_utf8_bom_and_crlf_positions(tmp_path):
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbfimport os\r\nimport pynvml\r\n")
    _, document = _scan_json(tmp_path)
    (finding,) = document["findings"]
    assert (finding["line"], finding["column"]) == (2, 1)


def test_sarif_and_github_stay_valid_with_every_kind_of_bad_file(tmp_path):
    _setup(tmp_path, "weights.py", b"\x00\x01")
    (tmp_path / "latin1.py").write_bytes(b"\xe9\n")
    # Only files that mention a check's marker are parsed, so this one does.
    (tmp_path / "broken.py").write_bytes(b"import pynvml\ndef f(:\n")
    sarif = run_cli("scan", ".", "--format", "sarif", cwd=tmp_path)
    notifications = json.loads(sarif.stdout)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert len(notifications) == 3
    github = run_cli("scan", ".", "--format", "github", cwd=tmp_path)
    assert github.stdout.count("::warning file=") == 3
    assert github.stdout.count("::error file=good.py") == 1
