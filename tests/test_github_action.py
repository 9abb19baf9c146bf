"""The composite GitHub Action (action.yml): its shape as GitHub reads it, and its shell steps run
here as a runner runs them (bash -eo pipefail, GITHUB_ACTION_PATH, RUNNER_TEMP, GITHUB_OUTPUT):
rocmlint is installed from the action's own folder, the scan writes SARIF that follows GitHub's
rules, and the upload step gets that file. (The upload itself needs GitHub and is not run here.)"""

import json
import os
import re
import subprocess
import sys

import yaml

from conftest import REPO
from test_sarif import _github_rules_hold, _validate, sarif_schema  # noqa: F401 - the fixture is used by name

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _expressions(value):
    if isinstance(value, dict):
        for item in value.values():
            yield from _expressions(item)
    elif isinstance(value, list):
        for item in value:
            yield from _expressions(item)
    elif isinstance(value, str):
        yield from EXPRESSION.findall(value)


def test_action_is_a_composite_action_github_can_run():
    assert ACTION["runs"]["using"] == "composite"
    declared = set(ACTION["inputs"])
    for expression in _expressions(ACTION):
        for name in re.findall(r"inputs\.([A-Za-z0-9_-]+)", expression):
            assert name in declared, name
    for step in ACTION["runs"]["steps"]:
        if "run" in step:
            assert step["shell"] == "bash"  # composite run steps must name their shell
            # Inputs reach scripts through `env`, never pasted into the script (script injection).
            assert "${{" not in step["run"], step["name"]
    upload = next(s for s in ACTION["runs"]["steps"] if "uses" in s)
    assert upload["uses"] == "github/codeql-action/upload-sarif@v4"  # Node 24: v3 runs on Node 20
    assert upload["with"] == {"sarif_file": "${{ inputs.sarif-file }}", "category": "${{ inputs.category }}"}
    assert upload["if"] == "inputs.upload == 'true'"


def _run_step(step, inputs: dict, env: dict, cwd) -> subprocess.CompletedProcess:
    def evaluate(text: str) -> str:
        return EXPRESSION.sub(lambda m: inputs[m.group(1).split(".", 1)[1]], text)

    step_env = {**env, **{name: evaluate(str(value)) for name, value in step.get("env", {}).items()}}
    script = cwd.parent / "step.sh"
    script.write_text(step["run"], encoding="utf-8")
    # What GitHub runs for `shell: bash`.
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=cwd, env=step_env,
                          capture_output=True, text=True, timeout=900)


def test_action_steps_install_scan_and_hand_over_the_sarif(tmp_path, sarif_schema):  # noqa: F811
    workspace, runner_temp = tmp_path / "workspace", tmp_path / "runner-temp"
    workspace.mkdir()
    runner_temp.mkdir()
    (workspace / "src").mkdir()
    (workspace / "src" / "monitor.py").write_text("import pynvml\n", encoding="utf-8")
    (workspace / ".git").mkdir()
    output = tmp_path / "github-output"
    output.write_text("")
    env = {
        "PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", str(tmp_path)),
        "GITHUB_ACTION_PATH": str(REPO), "RUNNER_TEMP": str(runner_temp), "GITHUB_OUTPUT": str(output),
        "GITHUB_WORKSPACE": str(workspace),
    }
    inputs = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    inputs.update({"python": sys.executable, "args": "--select ROCM001"})
    steps = {step["name"]: step for step in ACTION["runs"]["steps"]}

    install = _run_step(steps["Install rocmlint"], inputs, env, workspace)
    assert install.returncode == 0, install.stderr
    scan = _run_step(steps["Scan"], inputs, env, workspace)
    assert scan.returncode == 0, scan.stderr  # findings are not an error of the step
    assert output.read_text().splitlines() == ["exit-code=1"]
    document = json.loads((workspace / inputs["sarif-file"]).read_text(encoding="utf-8"))
    _validate(document, sarif_schema)
    _github_rules_hold(document)
    run = document["runs"][0]
    assert run["automationDetails"] == {"id": "rocmlint/"}
    assert [r["ruleId"] for r in run["results"]] == ["ROCM001"]
    assert run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/monitor.py"

    # fail-on-findings: the last step fails the job once the report is uploaded.
    fail = steps["Fail on findings"]
    assert fail["if"] == "inputs.fail-on-findings == 'true' && steps.scan.outputs.exit-code == '1'"
    failed = _run_step(fail, inputs, env, workspace)
    assert failed.returncode == 1 and "::error title=rocmlint::" in failed.stdout

    # A usage error stops the action before the upload.
    output.write_text("")
    broken = _run_step(steps["Scan"], {**inputs, "args": "--select ROCM777"}, env, workspace)
    assert broken.returncode == 2 and output.read_text().splitlines() == ["exit-code=2"]


def test_action_passes_globs_and_paths_with_spaces_through_untouched(tmp_path):
    """`--exclude tests/*` must reach rocmlint as a pattern, not as the list of files a shell
    makes of it; a quoted path with a space in it is one path."""
    workspace, runner_temp = tmp_path / "workspace", tmp_path / "runner-temp"
    for folder in ("my src", "tests", "other"):
        (workspace / folder).mkdir(parents=True)
        (workspace / folder / "monitor.py").write_text("import pynvml\n", encoding="utf-8")
    (workspace / ".git").mkdir()
    runner_temp.mkdir()
    output = tmp_path / "github-output"
    output.write_text("")
    # The venv the install step makes, made here without installing: one that runs this rocmlint.
    venv = runner_temp / "rocmlint-venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (venv / "python").chmod(0o755)
    env = {
        "PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", str(tmp_path)),
        "GITHUB_ACTION_PATH": str(REPO), "RUNNER_TEMP": str(runner_temp), "GITHUB_OUTPUT": str(output),
    }
    inputs = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    inputs.update({"paths": '"my src"\ntests other', "args": "--select ROCM001 --exclude tests/* --exclude 'other/*'"})
    scan = _run_step({s["name"]: s for s in ACTION["runs"]["steps"]}["Scan"], inputs, env, workspace)
    assert scan.returncode == 0, scan.stderr
    assert output.read_text().splitlines() == ["exit-code=1"]
    document = json.loads((workspace / inputs["sarif-file"]).read_text(encoding="utf-8"))
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in document["runs"][0]["results"]]
    # tests/ and other/ are named, so walked; the patterns leave out the files found in them.
    assert uris == ["my%20src/monitor.py"]


def test_readme_workflows_use_actions_that_run_on_node_24_and_fixed_revisions():
    """actions/checkout before v5 and codeql-action before v4 run on Node 20, which GitHub is
    removing from its runners; a pre-commit `rev` must be a fixed revision, not a branch."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    uses = re.findall(r"uses:\s*(\S+)@(\S+)", readme)
    majors = {name: int(ref.lstrip("v").split(".")[0]) for name, ref in uses if ref.startswith("v")}
    assert majors["actions/checkout"] >= 5 and majors["github/codeql-action/upload-sarif"] >= 4
    revs = re.findall(r"^\s*rev:\s*(\S+)", readme, re.MULTILINE)
    assert revs and not any(rev in ("main", "master", "HEAD") for rev in revs)


def test_action_writes_the_porting_report_and_its_summary(tmp_path):
    """With GITHUB_STEP_SUMMARY set (as on every runner), the report step appends the Markdown
    summary there and writes the HTML page; the scan's options (args) apply to it too."""
    workspace, runner_temp = tmp_path / "workspace", tmp_path / "runner-temp"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "monitor.py").write_text("import pynvml\n", encoding="utf-8")
    (workspace / "src" / "compiled.py").write_text('import torch\nm = torch.compile(m, mode="max-autotune")\n', encoding="utf-8")
    (workspace / ".git").mkdir()
    venv = runner_temp / "rocmlint-venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (venv / "python").chmod(0o755)
    summary = tmp_path / "step-summary.md"
    summary.write_text("earlier step's summary\n", encoding="utf-8")
    env = {
        "PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", str(tmp_path)), "GITHUB_ACTION_PATH": str(REPO),
        "RUNNER_TEMP": str(runner_temp), "GITHUB_OUTPUT": str(tmp_path / "output"), "GITHUB_STEP_SUMMARY": str(summary),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    inputs = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    inputs.update({"paths": "src", "args": "--select ROCM001"})
    steps = {s["name"]: s for s in ACTION["runs"]["steps"]}
    assert steps["Porting report"]["if"] == "inputs.report == 'true'"
    assert "${{" not in steps["Porting report"]["run"]
    done = _run_step(steps["Porting report"], inputs, env, workspace)
    assert done.returncode == 0, done.stderr
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step's summary\n## ROCm porting report: src\n")  # appended, not replaced
    assert "**1 finding** (1 error, 0 warnings, 0 notes)" in text and "| ROCM001 " in text and "ROCM101" not in text
    page = (workspace / inputs["report-file"]).read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and 'id="check-ROCM001"' in page and 'id="check-ROCM101"' not in page

    # Without a step summary (another CI service), the page is still written.
    del env["GITHUB_STEP_SUMMARY"]
    (workspace / inputs["report-file"]).unlink()
    done = _run_step(steps["Porting report"], inputs, env, workspace)
    assert done.returncode == 0 and (workspace / inputs["report-file"]).is_file(), done.stderr

    # A report that cannot be made warns and leaves the job to the scan's result.
    done = _run_step(steps["Porting report"], {**inputs, "args": "--select ROCM777"}, env, workspace)
    assert done.returncode == 0 and "::warning title=rocmlint::the porting report could not be written (exit 2)" in done.stdout
