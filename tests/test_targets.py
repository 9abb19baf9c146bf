"""Target awareness: [tool.rocmlint] rocm-version and arch, --rocm-version and --arch, read by
both faces, validated with errors that name the file and the key, and used by checks whose
truth depends on the GPU."""

import json
import textwrap

import pytest

from conftest import run_cli
from rocmlint.catalog.arch_facts import arch_facts
from rocmlint.catalog.loader import CheckFileError, check_by_id, parse_check
from rocmlint.config import ConfigError, GpuTarget, load_config_file
from rocmlint.engine import check_source, target_gate
from rocmlint.source import SourceFile

FP8 = "import torch\nw = x.to(torch.float8_e4m3fn)\n"


@pytest.mark.parametrize(
    "name,wave,fp8,capability",
    [("gfx90a", 64, "none", (9, 0)), ("gfx942", 64, "fnuz", (9, 4)), ("gfx950", 64, "ocp", (9, 5)),
     ("gfx1100", 32, "none", (11, 0)), ("gfx1201", 32, "ocp", (12, 0)), ("gfx942:sramecc+:xnack-", 64, "fnuz", (9, 4))],
)
def test_arch_facts(name, wave, fp8, capability):
    facts = arch_facts(name)
    assert (facts.wave_size, facts.fp8, facts.capability) == (wave, fp8, capability)


@pytest.mark.parametrize("name", ["sm_90", "gfx", "gfx8030", "GFX", "", "gfx9999"])
def test_unknown_arch_names(name):
    assert arch_facts(name) is None


def test_config_reads_targets(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.rocmlint]\nrocm-version = "6.4"\narch = ["gfx942", "GFX1100"]\n')
    config = load_config_file(tmp_path / "pyproject.toml")
    assert config.target == GpuTarget((6, 4), ("gfx942", "gfx1100"))


@pytest.mark.parametrize(
    "body,words",
    [
        ("rocm-version = 6.4", "[tool.rocmlint] rocm-version must be a ROCm release as a string"),
        ('rocm-version = "six"', "[tool.rocmlint] rocm-version must be a ROCm release"),
        ('arch = "gfx942"', "[tool.rocmlint] arch must be a non-empty list"),
        ('arch = ["sm_90"]', "[tool.rocmlint] arch: 'sm_90' is not an AMD GPU target"),
        ("arch = []", "[tool.rocmlint] arch must be a non-empty list"),
    ],
)
def test_bad_targets_name_file_and_key(tmp_path, body, words):
    (tmp_path / "pyproject.toml").write_text(f"[tool.rocmlint]\n{body}\n")
    with pytest.raises(ConfigError) as error:
        load_config_file(tmp_path / "pyproject.toml")
    assert str(tmp_path / "pyproject.toml") in str(error.value) and words in str(error.value)
    (tmp_path / "a.py").write_text(FP8)
    proc = run_cli("scan", ".", cwd=tmp_path)
    assert proc.returncode == 2 and words in proc.stderr


def _codes(proc):
    assert proc.returncode in (0, 1), proc.stderr
    return [f["code"] for f in json.loads(proc.stdout)["findings"]]


def test_arch_decides_the_fp8_check_in_both_faces(tmp_path):
    # ROCM104 is in preview (docs/precision.md): it runs with --preview / preview = true.
    (tmp_path / "a.py").write_text(FP8)
    assert _codes(run_cli("scan", ".", "--format", "json", "--preview", cwd=tmp_path)) == ["ROCM104"]
    # Only OCP-fp8 GPUs targeted: the OCP type is right there; the hit is gated, with its reason.
    proc = run_cli("scan", ".", "--format", "json", "--arch", "gfx950,gfx1201", "--show-gated", "--preview", cwd=tmp_path)
    assert _codes(proc) == []
    assert "not on the configured GPUs" in json.loads(proc.stdout)["gated"][0]["gate"]
    (tmp_path / "pyproject.toml").write_text('[tool.rocmlint]\narch = ["gfx950"]\npreview = true\n')
    assert _codes(run_cli("scan", ".", "--format", "json", "--preview", cwd=tmp_path)) == []
    # The command line replaces the configured list, and the message names the targets.
    proc = run_cli("scan", ".", "--format", "json", "--arch", "gfx942", "--preview", cwd=tmp_path)
    assert "gfx942" in json.loads(proc.stdout)["findings"][0]["message"]
    # flake8 reads the same table.
    import subprocess
    import sys

    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--select", "ROCM", "a.py"], cwd=tmp_path, capture_output=True, text=True)
    assert "ROCM104" not in flake8.stdout, flake8.stdout + flake8.stderr
    (tmp_path / "pyproject.toml").write_text('[tool.rocmlint]\narch = ["gfx942"]\npreview = true\n')
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--select", "ROCM", "a.py"], cwd=tmp_path, capture_output=True, text=True)
    assert "ROCM104" in flake8.stdout and "gfx942" in flake8.stdout


def test_bad_command_line_targets(tmp_path):
    (tmp_path / "a.py").write_text(FP8)
    proc = run_cli("scan", ".", "--rocm-version", "latest", cwd=tmp_path)
    assert proc.returncode == 2 and "--rocm-version must be a ROCm release" in proc.stderr
    proc = run_cli("scan", ".", "--arch", "gfx942,h100", cwd=tmp_path)
    assert proc.returncode == 2 and "--arch: 'h100' is not an AMD GPU target" in proc.stderr


def _check(target: dict):
    data = {
        "id": "ROCM999", "name": "synthetic", "title": "t", "languages": ["python"], "severity": "note",
        "precision": "low", "enabled-by-default": False, "tags": ["t"], "markers": ["x"],
        "message": "x on $TARGETS", "description": "d", "rationale": "r", "match": {"python": {"import": ["x"]}},
        "target": target, "fix": {"title": "t", "snippet": "s"}, "references": ["r"],
        "examples": {"invalid": [{"code": "import x\n", "lines": [1]}], "valid": [{"code": "y\n"}]},
    }
    return parse_check(data, "ROCM999-synthetic.yaml")


def test_rocm_version_bounds():
    check = _check({"rocm-from": "6.2", "rocm-before": "7.0"})
    assert target_gate(check, GpuTarget((6, 4)))[0] is None
    assert "holds before ROCm 7.0" in target_gate(check, GpuTarget((7, 0)))[0]
    assert "holds from ROCm 6.2" in target_gate(check, GpuTarget((6, 1, 3)))[0]
    assert target_gate(check, GpuTarget())[0] is None


def test_wave_size_fact_and_targets_in_the_message():
    check = _check({"fact": "wave-size", "affected": ["64"], "default": "CDNA"})
    source = SourceFile("a.py", "import x\n", "python", target=GpuTarget(None, ("gfx1100", "gfx90a")))
    findings, _ = check_source(source, [check])
    assert [f.message for f in findings] == ["x on gfx90a"]
    source = SourceFile("a.py", "import x\n", "python", target=GpuTarget(None, ("gfx1100",)))
    assert check_source(source, [check])[0] == []
    assert [f.message for f in check_source(SourceFile("a.py", "import x\n", "python"), [check])[0]] == ["x on CDNA"]


@pytest.mark.parametrize(
    "target,words",
    [({"fact": "fp8"}, "needs target.affected"), ({"affected": ["x"]}, "need target.fact"),
     ({"rocm-from": "7"}, "must be a ROCm release"), ({}, "target needs fact or rocm")],
)
def test_target_spec_errors(target, words):
    with pytest.raises(CheckFileError, match=words):
        _check(target)


def test_capability_comparisons_are_evaluated_for_the_targets():
    code = textwrap.dedent("""\
        import torch
        if torch.cuda.get_device_capability() >= (9, 0):
            use_hopper_kernels()
        """)
    check = check_by_id("ROCM103")
    assert len(check_source(SourceFile("a.py", code, "python"), [check])[0]) == 1
    mi300 = SourceFile("a.py", code, "python", target=GpuTarget(None, ("gfx942",)))
    assert "gfx942" in check_source(mi300, [check])[0][0].message
    rdna3 = SourceFile("a.py", code.replace("(9, 0)", "(12, 0)"), "python", target=GpuTarget(None, ("gfx1100",)))
    assert check_source(rdna3, [check])[0] == []


def test_capability_thresholds_every_amd_gpu_passes_as_ampere_are_harmless():
    check = check_by_id("ROCM103")

    def hits(comparison: str, target=None):
        code = f"import torch\nif torch.cuda.get_device_capability() {comparison}:\n    go()\n"
        return check_source(SourceFile("a.py", code, "python", target=target), [check], keep_gated=True)[0]

    for harmless in (">= (8, 0)", "< (8, 0)", "== (7, 5)", "!= (8, 0)"):
        [finding] = hits(harmless)
        assert finding.gate.startswith("target: harmless on current AMD GPUs"), harmless
    [hopper] = hits("< (9, 0)")  # a test that skips below Hopper runs its Hopper code on MI300
    assert hopper.gate is None and "gfx942 (9, 4)" in hopper.message and "gfx1100" in hopper.message
    [blackwell] = hits(">= (10, 0)")
    assert blackwell.gate is None and "gfx90a" not in blackwell.message and "gfx1100 (11, 0)" in blackwell.message
    [mi300_only] = hits(">= (10, 0)", GpuTarget(None, ("gfx942",)))
    assert mi300_only.gate.startswith("target: harmless on the configured GPUs (gfx942 (9, 4))")
