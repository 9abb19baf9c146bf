"""The flake8 plugin under real flake8 5, 6 and 7 (each installed in its own virtual environment
with rocmlint) and under the flake8 of this environment: findings and their columns, a broken
rocmlint configuration that must never break flake8, --isolated, the `rocm-ignore` option, and
what flake8 does with `extend-ignore = ROCM001` in its own configuration file."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import REPO

# The last release of each major line the plugin supports, and the first of the newest line.
VERSIONS = ["5.0.4", "6.1.0", "7.0.0", "installed"]

TRAIN = textwrap.dedent(
    """\
    import pynvml
    import torch

    label = "äöü"; model = torch.compile(model, mode="reduce-overhead")
    """
)
FORMAT = "%(path)s|%(row)d|%(col)d|%(code)s|%(text)s"


@pytest.fixture(scope="module")
def flake8_command(tmp_path_factory):
    made: dict[str, list[str]] = {}

    def command(version: str) -> list[str]:
        if version == "installed":
            return [sys.executable, "-m", "flake8"]
        if version not in made:
            env = tmp_path_factory.mktemp(f"flake8-{version}")
            subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
            python = env / "bin" / "python"
            install = subprocess.run(
                [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", f"flake8=={version}", "-e", str(REPO)],
                capture_output=True,
                text=True,
            )
            assert install.returncode == 0, install.stderr
            made[version] = [str(env / "bin" / "flake8")]
        return made[version]

    return command


def _run(command, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*command, "--format", FORMAT, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def _rows(proc) -> set[tuple]:
    assert "Traceback" not in proc.stderr, proc.stderr
    rows = set()
    for line in proc.stdout.splitlines():
        path, row, col, code, _ = line.split("|", 4)
        rows.add((str(Path(path)), int(row), int(col), code))
    return rows


def _project(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    (tmp_path / "clean.py").write_text("x = 1\n", encoding="utf-8")
    return tmp_path


def _version(command) -> str:
    out = subprocess.run([*command, "--version"], capture_output=True, text=True).stdout
    assert "rocmlint: 0.1.0" in out, out  # the plugin is registered
    return out.split()[0]


@pytest.mark.parametrize("version", VERSIONS)
def test_findings_with_code_point_columns(version, flake8_command, tmp_path):
    command = flake8_command(version)
    if version != "installed":
        assert _version(command) == version
    proc = _run(command, _project(tmp_path), "--select", "ROCM", ".")
    assert proc.returncode == 1
    # "äöü" is 3 code points, 6 UTF-8 bytes: the call is at code-point column 24.
    assert _rows(proc) == {("train.py", 1, 1, "ROCM001"), ("train.py", 4, 24, "ROCM002")}
    source = _run(command, tmp_path, "--select", "ROCM002", "--show-source", "train.py").stdout.splitlines()
    code_line, caret_line = source[-2], source[-1]
    assert code_line[caret_line.index("^") :].startswith("torch.compile(")


BROKEN = [
    ('[tool.rocmlint]\nselct = ["ROCM001"]\n', "unknown key [tool.rocmlint] selct"),
    ('[tool.rocmlint]\narch = ["sm_90"]\n', "[tool.rocmlint] arch: 'sm_90' is not an AMD GPU target"),
    ("tool = 5\n# rocmlint\n", "`tool` must be a table"),
    ("[tool.rocmlint\nselect = [", "not valid TOML"),
]
# Every kind of broken file under this environment's flake8; one under each other release.
BROKEN_CASES = [("installed", *case) for case in BROKEN] + [(v, *BROKEN[0]) for v in VERSIONS if v != "installed"]


@pytest.mark.parametrize("version,table,words", BROKEN_CASES)
def test_a_broken_configuration_never_breaks_flake8(version, table, words, flake8_command, tmp_path):
    command = flake8_command(version)
    _project(tmp_path)
    (tmp_path / "pyproject.toml").write_text(table, encoding="utf-8")
    # Other plugins' checks run as before, with no traceback.
    others = _run(command, tmp_path, "--select", "E501,F401", ".")
    assert others.returncode == 1 and "Traceback" not in others.stderr, others.stderr
    assert {line.split("|")[3] for line in others.stdout.splitlines()} == {"F401"}
    # With rocmlint selected: one ROCM000 diagnostic per file, on line 1, naming file and key.
    proc = _run(command, tmp_path, "--select", "ROCM", ".")
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stdout.splitlines()
    assert sorted(line.split("|")[:4] for line in lines) == [["./clean.py", "1", "1", "ROCM000"], ["./train.py", "1", "1", "ROCM000"]]
    assert all(str(tmp_path / "pyproject.toml") in line and words in line for line in lines)
    # --isolated: no configuration file is read (flake8's or rocmlint's), and the checks run.
    isolated = _run(command, tmp_path, "--isolated", "--select", "ROCM", ".")
    assert _rows(isolated) == {("train.py", 1, 1, "ROCM001"), ("train.py", 4, 24, "ROCM002")}


# rocm-ignore in each file flake8 reads, under this environment's flake8; setup.cfg under the others.
ROCM_IGNORE_CASES = [("installed", name) for name in ("setup.cfg", "tox.ini", ".flake8")] + [
    (v, "setup.cfg") for v in VERSIONS if v != "installed"
]


@pytest.mark.parametrize("version,config_file", ROCM_IGNORE_CASES)
def test_rocm_ignore_select_and_extend_select_in_flake8_config(version, config_file, flake8_command, tmp_path):
    command = flake8_command(version)
    _project(tmp_path)
    (tmp_path / "other.py").write_text("import pynvml\n", encoding="utf-8")
    (tmp_path / config_file).write_text(
        "[flake8]\nselect = E9\nextend-select = ROCM\nrocm-ignore = ROCM002\nper-file-ignores = other.py:ROCM001\n"
    )
    assert _rows(_run(command, tmp_path, ".")) == {("train.py", 1, 1, "ROCM001")}
    # On the command line the option replaces the file's value; a wrong id is a diagnostic.
    assert _rows(_run(command, tmp_path, "--rocm-ignore", "ROCM001", ".")) == {("train.py", 4, 24, "ROCM002")}
    wrong = _run(command, tmp_path, "--rocm-ignore", "ROCM777", ".")
    assert "Traceback" not in wrong.stderr
    assert "flake8 option rocm-ignore: unknown check or prefix 'ROCM777'" in wrong.stdout


@pytest.mark.parametrize("version", VERSIONS)
def test_extend_ignore_of_rocm_codes_in_a_flake8_config_file(version, flake8_command, tmp_path):
    """What the README says about flake8's own `extend-ignore`: 5.x takes it, 6.x and 7.x stop
    with a ValueError (their code pattern); `rocm-ignore` is the way around."""
    command = flake8_command(version)
    _project(tmp_path)
    (tmp_path / "setup.cfg").write_text("[flake8]\nselect = ROCM\nextend-ignore = ROCM001\n")
    proc = _run(command, tmp_path, ".")
    major = int((version if version != "installed" else _version(command)).split(".")[0])
    if major == 5:
        assert _rows(proc) == {("train.py", 4, 24, "ROCM002")}
    else:
        assert proc.returncode != 0 and "ValueError" in proc.stderr
        assert "'ROCM001' supplied to 'extend-ignore' option does not match" in proc.stderr
