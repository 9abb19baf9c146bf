"""What a ruff user reaches for: the same names, with the same meanings."""

import json
import subprocess
import sys
from importlib import resources

import jsonschema
import pytest

from conftest import PITFALLS, REPO, run_cli
from conftest import write_project as _project


def _codes(proc):
    return [(f["path"], f["code"]) for f in json.loads(proc.stdout)["findings"]]


def test_paths_after_and_between_options(tmp_path):
    _project(tmp_path, name="src/a.py")
    _project(tmp_path, name="tests/b.py")
    _project(tmp_path, name="other/c.py")
    proc = run_cli("scan", "src", "--no-cache", "tests", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert sorted({path for path, _ in _codes(proc)}) == ["src/a.py", "tests/b.py"]


def test_options_are_never_abbreviated(tmp_path):
    _project(tmp_path)
    for option in ("--sel", "--out", "--form"):
        proc = run_cli("scan", ".", option, "x", cwd=tmp_path)
        assert proc.returncode == 2 and f"unrecognized arguments: {option}" in proc.stderr


def test_check_is_scan_and_dash_v_prints_the_version(tmp_path):
    _project(tmp_path)
    scan = run_cli("scan", ".", "--no-cache", cwd=tmp_path)
    check = run_cli("check", ".", "--no-cache", cwd=tmp_path)
    assert check.returncode == scan.returncode == 1 and check.stdout == scan.stdout
    version = run_cli("-V")
    assert version.returncode == 0 and version.stdout.startswith("rocmlint ")


def test_output_formats_with_ruffs_names(tmp_path):
    _project(tmp_path, "import torch\nx = 'é'; model = torch.compile(model, mode=\"reduce-overhead\")\nimport pynvml\n")
    text = run_cli("scan", ".", "--no-cache", cwd=tmp_path).stdout
    assert run_cli("scan", ".", "--no-cache", "--output-format", "concise", cwd=tmp_path).stdout == text
    full = run_cli("scan", ".", "--no-cache", "--output-format", "full", cwd=tmp_path).stdout
    assert "    fix: " in full and "fix: " not in text
    lines = run_cli("scan", ".", "--no-cache", "--output-format", "json-lines", cwd=tmp_path).stdout.splitlines()
    whole = json.loads(run_cli("scan", ".", "--no-cache", "--format", "json", cwd=tmp_path).stdout)["findings"]
    assert [json.loads(line) for line in lines] == whole and len(whole) == 2
    rd = json.loads(run_cli("scan", ".", "--no-cache", "--output-format", "rdjson", cwd=tmp_path).stdout)
    assert rd["source"]["name"] == "rocmlint"
    by_code = {d["code"]["value"]: d for d in rd["diagnostics"]}
    compile_call = by_code["ROCM002"]
    # rdjson columns count UTF-8 bytes: `é` is two of them.
    column = next(f["column"] for f in whole if f["code"] == "ROCM002")
    assert compile_call["location"]["range"]["start"]["column"] == column + 1
    assert compile_call["suggestions"][0]["text"] == '("default" if torch.version.hip else "reduce-overhead")'
    assert by_code["ROCM001"]["severity"] == "ERROR" and "suggestions" not in by_code["ROCM001"]
    pylint = run_cli("scan", ".", "--no-cache", "--output-format", "pylint", cwd=tmp_path).stdout.splitlines()
    assert pylint[0].startswith("train.py:2: [ROCM002] ") and pylint[1].startswith("train.py:3: [ROCM001] ")
    azure = run_cli("scan", ".", "--no-cache", "--output-format", "azure", cwd=tmp_path).stdout.splitlines()
    assert azure[1].startswith("##vso[task.logissue type=error;sourcepath=train.py;linenumber=3;columnnumber=1;code=ROCM001;]ROCM001 ")


def test_output_file_is_output(tmp_path):
    _project(tmp_path)
    proc = run_cli("scan", ".", "--no-cache", "--output-file", "out.txt", cwd=tmp_path)
    assert proc.returncode == 1 and proc.stdout == ""
    assert "ROCM001" in (tmp_path / "out.txt").read_text()


def test_color(tmp_path):
    _project(tmp_path)
    always = run_cli("scan", ".", "--no-cache", "--color", "always", cwd=tmp_path).stdout
    assert "\033[1mtrain.py\033[0m:1:1: \033[1;31mROCM001\033[0m" in always
    assert "\033[" not in run_cli("scan", ".", "--no-cache", cwd=tmp_path).stdout  # a pipe: no colour
    forced = run_cli("scan", ".", "--no-cache", cwd=tmp_path, env={"FORCE_COLOR": "1"}).stdout
    assert forced == always
    assert "\033[" not in run_cli("scan", ".", "--no-cache", "--color", "never", cwd=tmp_path, env={"FORCE_COLOR": "1"}).stdout


def test_fix_only_and_exit_non_zero_on_fix(tmp_path):
    _project(tmp_path)
    proc = run_cli("scan", ".", "--no-cache", "--fix-only", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == "" and "Fixed 1 finding." in proc.stderr
    assert "torch.version.hip" in (tmp_path / "train.py").read_text()
    _project(tmp_path)
    again = run_cli("scan", ".", "--no-cache", "--fix-only", "--exit-non-zero-on-fix", cwd=tmp_path)
    assert again.returncode == 1
    nothing = run_cli("scan", ".", "--no-cache", "--fix-only", "--exit-non-zero-on-fix", cwd=tmp_path)
    assert nothing.returncode == 0 and "Fixed 0 findings." in nothing.stderr
    _project(tmp_path, 'import torch\nmodel = torch.compile(model, mode="reduce-overhead")\n')
    # --fix with nothing left: 0 as before, 1 with --exit-non-zero-on-fix.
    assert run_cli("scan", ".", "--no-cache", "--fix", "--exit-non-zero-on-fix", cwd=tmp_path).returncode == 1
    _project(tmp_path, 'import torch\nmodel = torch.compile(model, mode="reduce-overhead")\n')
    assert run_cli("scan", ".", "--no-cache", "--fix", cwd=tmp_path).returncode == 0
    wrong = run_cli("scan", ".", "--exit-non-zero-on-fix", cwd=tmp_path)
    assert wrong.returncode == 2 and "needs --fix" in wrong.stderr
    # Standard input: the fixed text only.
    for extra, code in (((), 0), (("--exit-non-zero-on-fix",), 1)):
        stdin = subprocess.run(
            [sys.executable, "-m", "rocmlint", "scan", "-", "--stdin-filename", "t.py", "--fix-only", *extra],
            input=PITFALLS, capture_output=True, text=True, cwd=tmp_path,
        )
        assert stdin.returncode == code and stdin.stderr == ""
        assert stdin.stdout == PITFALLS.replace('mode="reduce-overhead"', 'mode=("default" if torch.version.hip else "reduce-overhead")')


def test_ignore_noqa_reports_what_comments_suppress(tmp_path):
    _project(tmp_path, "import pynvml  # noqa: ROCM001\n")
    _project(tmp_path, "# flake8: noqa\nimport pynvml\n", name="whole.py")
    assert run_cli("scan", ".", "--no-cache", cwd=tmp_path).returncode == 0
    proc = run_cli("scan", ".", "--ignore-noqa", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1
    assert _codes(proc) == [("train.py", "ROCM001"), ("whole.py", "ROCM001")]
    # Kept results are those of a scan that honours noqa: a scan after it still does.
    assert run_cli("scan", ".", cwd=tmp_path).returncode == 0
    stdin = subprocess.run(
        [sys.executable, "-m", "rocmlint", "scan", "-", "--stdin-filename", "x.py", "--ignore-noqa"],
        input="import pynvml  # noqa\n", capture_output=True, text=True, cwd=tmp_path,
    )
    assert stdin.returncode == 1 and "x.py:1:1: ROCM001" in stdin.stdout


def test_file_level_noqa(tmp_path):
    """`# flake8: noqa` at the start of a line exempts the file, as flake8 reads it (codes after
    it do not narrow it); `# rocmlint: noqa: IDS` exempts the file from those checks only."""
    _project(tmp_path, "import pynvml\n# flake8: noqa\n", name="a.py")
    _project(tmp_path, "import pynvml  # flake8: noqa\n", name="b.py")  # not at the start of its line
    _project(tmp_path, "# flake8: noqa: ROCM002\nimport pynvml\n", name="c.py")
    _project(tmp_path, "# rocmlint: noqa: ROCM001\n" + PITFALLS, name="d.py")
    _project(tmp_path, "// rocmlint: noqa\n__shfl_xor_sync(0xffffffff, v, 16);\n", name="k.cu")
    _project(tmp_path, "# rocmlint: noqa\n__shfl_xor_sync(0xffffffff, v, 16);\n", name="m.cu")  # not a C++ comment
    proc = run_cli("scan", ".", "--no-cache", "--no-project", "--format", "json", cwd=tmp_path)
    found = _codes(proc)
    files = {path for path, _ in found}
    assert "a.py" not in files and "c.py" not in files and "k.cu" not in files
    assert ("b.py", "ROCM001") in found and "m.cu" in files
    assert [code for path, code in found if path == "d.py"] == ["ROCM002"]


def test_file_level_noqa_agrees_with_flake8(tmp_path):
    """Real flake8 skips the same files the scanner exempts."""
    _project(tmp_path, "import pynvml\n# flake8: noqa\n", name="a.py")
    _project(tmp_path, "# flake8: noqa: ROCM002\nimport pynvml\n", name="c.py")
    _project(tmp_path, "#flake8: noqa\nimport pynvml\n", name="d.py")  # flake8 wants the space
    _project(tmp_path, "import pynvml  # flake8: noqa\n", name="e.py")
    names = ["a.py", "c.py", "d.py", "e.py"]
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--select", "ROCM", *names], cwd=tmp_path, capture_output=True, text=True)
    reported = sorted({line.split(":")[0] for line in flake8.stdout.splitlines()})
    scanned = sorted({path for path, _ in _codes(run_cli("scan", *names, "--no-cache", "--format", "json", cwd=tmp_path))})
    assert reported == scanned == ["d.py", "e.py"]


def test_extend_exclude_and_per_file_ignores_on_the_command_line(tmp_path):
    _project(tmp_path, name="src/a.py")
    _project(tmp_path, name="tests/t.py")
    _project(tmp_path, name="gen/g.py")
    proc = run_cli(
        "scan", ".", "--no-cache", "--format", "json", "--extend-exclude", "gen/", "--per-file-ignores", "tests/**:ROCM001,ROCM002",
        cwd=tmp_path,
    )
    assert sorted(_codes(proc)) == [("src/a.py", "ROCM001"), ("src/a.py", "ROCM002")]
    negated = run_cli("scan", ".", "--no-cache", "--format", "json", "--extend-per-file-ignores", "!src/:ROCM001", cwd=tmp_path)
    assert [path for path, code in _codes(negated) if code == "ROCM001"] == ["src/a.py"]
    # --per-file-ignores takes the place of the configured table; --extend-per-file-ignores adds to it.
    (tmp_path / "rocmlint.toml").write_text('per-file-ignores = { "src/**" = ["ROCM002"] }\n')
    replaced = run_cli("scan", "src", "--no-cache", "--format", "json", "--per-file-ignores", "gen/**:ROCM001", cwd=tmp_path)
    assert _codes(replaced) == [("src/a.py", "ROCM001"), ("src/a.py", "ROCM002")]
    extended = run_cli("scan", "src", "--no-cache", "--format", "json", "--extend-per-file-ignores", "src/**:ROCM001", cwd=tmp_path)
    assert _codes(extended) == []
    wrong = run_cli("scan", ".", "--per-file-ignores", "tests/**", cwd=tmp_path)
    assert wrong.returncode == 2 and "give PATTERN:IDS" in wrong.stderr
    unknown = run_cli("scan", ".", "--per-file-ignores", "tests/**:NOPE9", cwd=tmp_path)
    assert unknown.returncode == 2


def test_config_key_value_and_show_settings(tmp_path):
    _project(tmp_path)
    (tmp_path / "rocmlint.toml").write_text('select = ["ROCM001"]\nrocm-version = "6.2"\n')
    settings = run_cli("scan", "--show-settings", "--config", "select = ['ROCM002']", "--config", "arch = ['gfx942']", ".", cwd=tmp_path)
    assert settings.returncode == 0, settings.stderr
    assert f"# Settings path: {(tmp_path / 'rocmlint.toml').as_posix()}" in settings.stdout
    assert 'select = ["ROCM002"]' in settings.stdout and 'rocm-version = "6.2"' in settings.stdout
    assert 'arch = ["gfx942"]' in settings.stdout and "# checks that run: ROCM002\n" in settings.stdout
    proc = run_cli("scan", ".", "--no-cache", "--format", "json", "--config", "select = ['ROCM002']", cwd=tmp_path)
    assert _codes(proc) == [("train.py", "ROCM002")]
    for wrong, said in (
        ("select = ['NOPE9']", "unknown check or prefix"),
        ("colour = 1", "unknown key colour"),
        ("select = [", "neither a configuration file nor a TOML"),
        ("missing.toml", "no such file"),
    ):
        bad = run_cli("scan", ".", "--config", wrong, cwd=tmp_path)
        assert bad.returncode == 2 and said in bad.stderr, bad.stderr


def test_hidden_rocmlint_toml_is_read_first(tmp_path):
    _project(tmp_path)
    (tmp_path / "rocmlint.toml").write_text('select = ["ROCM001"]\n')
    (tmp_path / ".rocmlint.toml").write_text('select = ["ROCM002"]\n')
    proc = run_cli("scan", ".", "--no-cache", "--format", "json", cwd=tmp_path)
    assert _codes(proc) == [("train.py", "ROCM002")]
    (tmp_path / ".rocmlint.toml").write_text('select = ["NOPE9"]\n')
    bad = run_cli("scan", ".", "--no-cache", cwd=tmp_path)
    assert bad.returncode == 2 and ".rocmlint.toml" in bad.stderr


def test_show_files(tmp_path):
    _project(tmp_path, name="src/a.py")
    _project(tmp_path, "x\n", name="src/notes.txt")
    _project(tmp_path, name="build/b.py")
    _project(tmp_path, "__global__ void k() {}\n", name="csrc/k.cu")
    proc = run_cli("scan", "--show-files", ".", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.splitlines() == ["csrc/k.cu", "src/a.py"]
    python_only = run_cli("scan", "--show-files", "--select", "ROCM001", ".", cwd=tmp_path)
    assert python_only.stdout.splitlines() == ["src/a.py"]


def _schema(name):
    return json.loads((resources.files("rocmlint") / "schemas" / name).read_text(encoding="utf-8"))


def test_json_report_matches_its_schema():
    schema = _schema("report.schema.json")
    jsonschema.Draft7Validator.check_schema(schema)
    proc = run_cli("scan", "sample_repos", "--no-cache", "--format", "json", "--show-gated", "--show-skipped", cwd=REPO)
    document = json.loads(proc.stdout)
    assert document["format_version"] == 1 and document["findings"] and document["gated"]
    jsonschema.validate(document, schema)
    broken = dict(document, findings=[dict(document["findings"][0], line=0)])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


@pytest.mark.parametrize(
    "table",
    [
        {"select": ["ROCM0", "ALL"], "ignore": ["ROCM005"], "per-file-ignores": {"tests/**": ["ROCM001"], "!src/": ["ROCM2"]}},
        {"exclude": ["third_party/"], "extend-exclude": ["*_pb2.py"], "max-file-size": 0, "preview": True},
        {"cuda-only": ["csrc/sm90/"], "rocm-sources": ["csrc/common/"], "rocm-version": "6.4", "arch": ["gfx942", "gfx1100"]},
        {"colour": True},
        {"select": "ROCM001"},
        {"max-file-size": -1},
        {"rocm-version": 6.4},
        {"preview": "yes"},
        {"per-file-ignores": {"tests/**": "ROCM001"}},
        {"arch": []},
        {"select": ["ROCM001!"]},
    ],
)
def test_configuration_schema_agrees_with_the_reader(table, tmp_path):
    from rocmlint.config import KNOWN_KEYS, ConfigError, parse_config

    schema = _schema("rocmlint.schema.json")
    jsonschema.Draft7Validator.check_schema(schema)
    assert sorted(schema["properties"]) == sorted(KNOWN_KEYS)
    try:
        parse_config(table, tmp_path / "rocmlint.toml")
        accepted = True
    except ConfigError:
        accepted = False
    valid = jsonschema.Draft7Validator(schema).is_valid(table)
    assert valid == accepted, table
