"""The wheel carries the check catalog: build it, install it in a fresh venv, use it there."""

import json
import subprocess
import sys
import venv

from conftest import REPO


def test_wheel_installs_and_runs_in_a_fresh_venv(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(REPO)],
        check=True,
        capture_output=True,
    )
    (wheel,) = dist.glob("rocmlint-*.whl")
    import zipfile

    with zipfile.ZipFile(wheel) as archive:  # the license travels with the package
        licenses = [n for n in archive.namelist() if n.endswith("/LICENSE") and ".dist-info/" in n]
        assert licenses and archive.read(licenses[0]) == (REPO / "LICENSE").read_bytes()
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    bin_dir = env_dir / "bin"
    install = subprocess.run([bin_dir / "pip", "install", "-q", str(wheel)], capture_output=True, text=True)
    assert install.returncode == 0, install.stderr

    elsewhere = tmp_path / "elsewhere"  # not the source tree: the catalog must come from the wheel
    elsewhere.mkdir()
    rules = subprocess.run([bin_dir / "rocmlint", "rules"], cwd=elsewhere, capture_output=True, text=True)
    assert rules.returncode == 0, rules.stderr
    shipped = sorted(p.name.split("-")[0] for p in (REPO / "checks").glob("ROCM*.yaml"))
    assert [line.split()[0] for line in rules.stdout.splitlines()] == shipped

    (elsewhere / "a.py").write_text("import pynvml\n")
    scan = subprocess.run([bin_dir / "rocmlint", "scan", "."], cwd=elsewhere, capture_output=True, text=True)
    assert scan.returncode == 1 and "a.py:1:1: ROCM001" in scan.stdout
    module = subprocess.run([bin_dir / "python", "-m", "rocmlint", "--version"], cwd=elsewhere, capture_output=True, text=True)
    assert module.returncode == 0 and module.stdout.startswith("rocmlint ")
    flake8 = subprocess.run([bin_dir / "flake8", "--select", "ROCM", "."], cwd=elsewhere, capture_output=True, text=True)
    assert flake8.returncode == 1 and "./a.py:1:1: ROCM001" in flake8.stdout
    no_torch = subprocess.run(
        [bin_dir / "python", "-c", "import rocmlint.cli, rocmlint.engine, sys; assert 'torch' not in sys.modules"],
        cwd=elsewhere,
        capture_output=True,
        text=True,
    )
    assert no_torch.returncode == 0, no_torch.stderr
    # The doctor's JSON Schema travels in the wheel and validates the installed doctor's output.
    schema = subprocess.run([bin_dir / "rocmlint", "doctor", "--schema"], cwd=elsewhere, capture_output=True, text=True)
    assert schema.returncode == 0, schema.stderr
    assert json.loads(schema.stdout) == json.loads((REPO / "rocmlint" / "runtime" / "doctor.schema.json").read_text())


def test_license_file_matches_pyproject():
    import tomllib

    declared = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["license"]
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert declared == {"text": "Apache-2.0"}
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"]
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "END OF TERMS AND CONDITIONS" in text


def _imported_by_a_one_file_scan(tmp_path, module: str) -> bool:
    """Whether a one-file scan imports `module`, in the second process to start: the first start
    after an install keeps the parsed catalog (which imports more); the second is the one a
    user waits for."""
    one = tmp_path / "one.py"
    one.write_text("import torch\ntorch.backends.cudnn.benchmark = True\n", encoding="utf-8")
    code = (
        "import sys\nfrom rocmlint.cli import main\n"
        f"main(['scan', {str(one)!r}, '-q', '--exit-zero', '--no-cache'])\n"
        f"print({module!r} in sys.modules)\n"
    )
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1] == "True"


def test_a_one_file_python_scan_does_not_import_dataclasses(tmp_path):
    # Importing `dataclasses` (it imports `inspect`) costs about 8 ms on Python 3.11, a tenth of a
    # one-file scan: the engine's classes are records (rocmlint.records) for that reason, and a
    # module a one-file scan imports that makes its classes with @dataclass brings the cost back.
    assert not _imported_by_a_one_file_scan(tmp_path, "dataclasses")


def test_a_one_file_scan_does_not_import_shutil(tmp_path):
    # argparse's own help formatter imports `shutil` (with bz2, lzma and more: about 3 ms) for the
    # terminal's width, as each command's parser is built: every command is given rocmlint's.
    assert not _imported_by_a_one_file_scan(tmp_path, "shutil")
