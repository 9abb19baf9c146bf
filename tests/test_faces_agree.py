"""The flake8 plugin and the scanner are two faces of one engine: real flake8 must report the
same (path, line, column, code) set as `rocmlint scan --format json` on Python files, columns
included (both count code points)."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import REPO, run_cli

TREE = {
    "app/train.py": """\
        import pynvml
        import torch as T

        label = "äöü"; model = T.compile(model, mode="reduce-overhead")

        @T.compile(mode="reduce-overhead")
        def step(x):
            return x
        """,
    "app/monitor.py": """\
        from pynvml import nvmlInit  # noqa: ROCM001
        import torch

        if torch.version.hip:
            fast = torch.compile(model, mode="reduce-overhead")
        """,
    "app/nested/util.py": """\
        class Probe:
            from pynvml import nvmlDeviceGetCount
        """,
}


def _flake8(cwd: Path, *args: str) -> set[tuple[str, int, int, str]]:
    proc = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "ROCM", "--format", "%(path)s|%(row)d|%(col)d|%(code)s", *args, "."],
        cwd=cwd,
        capture_output=True,
        text=True,
    )
    assert proc.returncode in (0, 1), proc.stderr
    rows = set()
    for line in proc.stdout.splitlines():
        path, row, col, code = line.split("|")
        rows.add((str(Path(path)), int(row), int(col), code))
    return rows


def _scanner(cwd: Path) -> set[tuple[str, int, int, str]]:
    proc = run_cli("scan", ".", "--format", "json", cwd=cwd)
    document = json.loads(proc.stdout)
    rows = set()
    for f in document["findings"]:
        if not f["path"].endswith(".py"):
            continue
        # Both faces count columns in code points, as pycodestyle does.
        rows.add((str(Path(f["path"])), f["line"], f["column"], f["code"]))
    return rows


def _write_tree(root: Path) -> None:
    for name, text in TREE.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def test_flake8_and_scanner_agree(tmp_path):
    _write_tree(tmp_path)
    from_flake8 = _flake8(tmp_path)
    from_scanner = _scanner(tmp_path)
    assert from_flake8 == from_scanner
    assert from_flake8 == {
        ("app/train.py", 1, 1, "ROCM001"),
        # "äöü" is 3 code points and 6 UTF-8 bytes: the call starts at code-point column 24,
        # which both faces print (the `ast` tree's byte column would be 27).
        ("app/train.py", 4, 24, "ROCM002"),
        ("app/train.py", 6, 2, "ROCM002"),
        ("app/nested/util.py", 2, 5, "ROCM001"),
    }


def test_both_faces_read_tool_rocmlint(tmp_path):
    _write_tree(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.rocmlint]\nignore = ["ROCM002"]\nexclude = ["app/nested/"]\n')
    expected = {("app/train.py", 1, 1, "ROCM001")}
    assert _flake8(tmp_path) == expected
    assert _scanner(tmp_path) == expected
    # A nested rocmlint.toml governs the files under it, in both faces; so do per-file-ignores.
    (tmp_path / "app" / "nested" / "rocmlint.toml").write_text('select = ["ROCM001"]\n')
    (tmp_path / "pyproject.toml").write_text('[tool.rocmlint]\nper-file-ignores = { "app/train.py" = ["ROCM001"] }\n')
    expected = {("app/train.py", 4, 24, "ROCM002"), ("app/train.py", 6, 2, "ROCM002"), ("app/nested/util.py", 2, 5, "ROCM001")}
    assert _flake8(tmp_path) == expected
    assert _scanner(tmp_path) == expected


@pytest.mark.parametrize("sample", ["nvidia_app", "rocm_port"])
def test_faces_agree_on_the_sample_repos(sample):
    root = REPO / "sample_repos" / sample
    assert _flake8(root) == _scanner(root)


# What `# noqa` suppresses is flake8's grammar in both faces: the codes it lists end at the first
# word that is not a code, are compared case-sensitively, and a comment anywhere in a statement
# covers all its lines. Each line says whether flake8 itself reports the ROCM001 on it.
NOQA_FORMS = {
    "import pynvml  # noqa: E501 see ROCm docs\n": True,  # free text is not read as codes
    "import pynvml  # noqa:E501,ROCM001 see ROCm docs\n": False,
    "import pynvml  # noqa: rocm001\n": True,  # codes are compared case-sensitively
    "import pynvml  #noqa\n": True,  # not a noqa comment for flake8
    "import pynvml  # noqa:  ROCM002\n": False,  # two spaces: no codes, a bare noqa
    "import pynvml  # noqa: see ROCm docs\n": False,  # no codes: a bare noqa
    "import pynvml  # NOQA: ROCM0 covers ROCM001\n": False,
    "import pynvml  # noqa: E501  # noqa\n": True,  # the first noqa of the line counts
    'import pynvml; doc = """\ntext\n"""  # noqa: ROCM001\n': False,  # the lines the string spans
    "import pynvml, \\\n    os  # noqa: ROCM001\n": False,  # the lines the backslash joins
    "import pynvml; x = (\n    1)  # noqa: ROCM001\n": True,  # brackets do not join lines for noqa
}


@pytest.mark.parametrize("line", sorted(NOQA_FORMS))
def test_faces_read_noqa_as_flake8_does(tmp_path, line):
    (tmp_path / "m.py").write_text(line, encoding="utf-8")
    expected = {("m.py", 1, 1, "ROCM001")} if NOQA_FORMS[line] else set()
    assert _scanner(tmp_path) == expected
    assert _flake8(tmp_path) == expected
    # With flake8's own reading switched off, the plugin alone must hold the same view.
    assert _flake8(tmp_path, "--disable-noqa") == expected
