"""The engine's own promises: schema errors, prefilter, suppressions, parallel = serial."""

import textwrap

import pytest
import yaml

from rocmlint.catalog.loader import CheckFileError, catalog_files, load_check_file, parse_check
from rocmlint.config import Config
from rocmlint.engine import ScanRequest, check_source, scan, select_checks
from rocmlint.source import SourceFile


def _rocm001_data() -> dict:
    path = next(p for p in catalog_files() if p.name.startswith("ROCM001-"))
    return yaml.safe_load(path.read_text())


def test_unknown_key_is_an_error_naming_file_and_key():
    data = _rocm001_data()
    data["fix"]["snipet"] = "x"
    with pytest.raises(CheckFileError, match=r"ROCM777-x.yaml: unknown key fix.snipet"):
        parse_check(data, "ROCM777-x.yaml")


def test_yaml_booleans_are_caught_by_the_types():
    data = _rocm001_data()
    data["severity"] = False  # what PyYAML makes of `severity: no`
    with pytest.raises(CheckFileError, match="severity must be one of error, warning, note"):
        parse_check(data, "f.yaml")


@pytest.mark.parametrize(
    "mutate,words",
    [
        (lambda d: d.pop("rationale"), "missing key rationale"),
        (lambda d: d.update(message="two\nlines"), "message must be one line"),
        (lambda d: d.update(id="R1"), "id must look like ROCM001"),
        (lambda d: d.update(match={"python": {"imprt": ["x"]}}), "unknown key imprt"),
        (lambda d: d.update(match={"regex": {}}), "match must have exactly one of"),
        (lambda d: d["examples"]["invalid"][0].update(lines="1"), "lines must be a list of integers"),
        (lambda d: d.update(languages=["fortran"]), "languages must be a list of languages"),
    ],
)
def test_schema_errors(mutate, words):
    from rocmlint.engine import compile_matcher

    data = _rocm001_data()
    mutate(data)
    with pytest.raises(CheckFileError, match=words):
        compile_matcher(parse_check(data, "f.yaml"))


def test_file_name_must_match_id_and_name(tmp_path):
    data = _rocm001_data()
    bad = tmp_path / "ROCM001-other-name.yaml"
    bad.write_text(yaml.safe_dump(data))
    with pytest.raises(CheckFileError, match="file name must be ROCM001-pynvml-top-level-import.yaml"):
        load_check_file(bad)


def test_files_without_markers_are_never_parsed():
    # Not valid Python, but it mentions no check's marker: nothing to report, no parse error.
    source = SourceFile("x.py", "def broken(:\n", "python")
    assert check_source(source, select_checks(preview=True)) == ([], [])
    with_marker = SourceFile("y.py", "import pynvml\ndef broken(:\n", "python")
    findings, problems = check_source(with_marker, select_checks(preview=True))
    assert findings == [] and "syntax error" in problems[0].reason


def test_build_checks_read_only_setup_py_among_python_files():
    # "torch==2.1.0" holds ROCM307's marker; outside setup.py no build check reads a Python
    # file, so a module that is not valid Python is not parsed for them.
    checks = select_checks(["ROCM3"], preview=True)
    text = "REQUIRES = ['torch==2.1.0']\ndef broken(:\n"
    assert check_source(SourceFile("pkg/module.py", text, "python"), checks) == ([], [])
    findings, problems = check_source(SourceFile("pkg/setup.py", text, "python"), checks)
    assert findings == [] and "syntax error" in problems[0].reason
    setup_py = "from setuptools import setup\nsetup(name='x', install_requires=['torch==2.1.0'])\n"
    assert [f.check_id for f in check_source(SourceFile("setup.py", setup_py, "python"), checks)[0]] == ["ROCM307"]


def test_python_file_names_only_with_python(tmp_path):
    data = _rocm001_data()
    data["languages"] = ["cpp"]
    data["python-file-names"] = ["setup.py"]
    with pytest.raises(CheckFileError, match="python-file-names is only for a check whose languages include python"):
        parse_check(data, "f.yaml")


def test_noqa_forms():
    code = textwrap.dedent(
        """\
        import pynvml  # noqa
        import pynvml  # noqa: ROCM001
        import pynvml  # noqa:ROCM002,ROCM001
        import pynvml  # NOQA: ROCM0
        import pynvml  # noqa: ROCM002
        import pynvml  # noqa: E501
        """
    )
    findings, _ = check_source(SourceFile("x.py", code, "python"), select_checks(preview=True))
    assert [f.line for f in findings] == [5, 6]


def test_selection():
    assert [c.id for c in select_checks(["ROCM001"], preview=True)] == ["ROCM001"]
    assert "ROCM001" not in [c.id for c in select_checks(None, ["rocm001"], preview=True)]
    assert [c.id for c in select_checks(["ALL"], preview=True)] == sorted(c.id for c in select_checks(["ALL"], preview=True))


def test_parallel_scan_equals_serial_scan(tmp_path):
    for i in range(240):
        text = "import pynvml\n" if i % 3 == 0 else "import torch\nm = torch.compile(m, mode='reduce-overhead')\n"
        (tmp_path / f"m{i:03d}.py").write_text(text)
    (tmp_path / "bad.py").write_bytes(b"\xff\xfe import pynvml")
    checks = select_checks(preview=True)
    config = Config(root=tmp_path)
    serial = scan(ScanRequest([tmp_path], checks, config, jobs=1))
    parallel = scan(ScanRequest([tmp_path], checks, config, jobs=2))
    assert serial.findings == parallel.findings
    assert serial.problems == parallel.problems
    assert len(serial.findings) == 240 and len(serial.problems) == 1


def test_cpp_suppression_forms():
    code = textwrap.dedent(
        """\
        __global__ void k(float* x) {
          float a = __shfl_sync(0xffffffff, x[0], 0);  // noqa: ROCM003
          float b = __shfl_sync(0xffffffff, x[0], 0);  // NOLINT(ROCM003)
          float c = __shfl_sync(0xffffffff, x[0], 0);  /* NOLINT */
          // NOLINTNEXTLINE(ROCM003)
          float d = __shfl_sync(0xffffffff, x[0], 0);
          float e = __shfl_sync(0xffffffff, x[0], 0);  // NOLINT(bugprone-narrowing)
          float f = __shfl_sync(0xffffffff, x[0], 0);  // noqa: ROCM004
          float g = __shfl_sync(0xffffffff, x[0], 0);  # noqa
        }
        """
    )
    findings, _ = check_source(SourceFile("k.cu", code, "cpp"), select_checks(["ROCM003"], preview=True))
    assert [f.line for f in findings] == [7, 8, 9]


def test_a_match_that_takes_in_its_newline_ends_on_its_own_line():
    from rocmlint.catalog.loader import check_by_id

    source = SourceFile("k.cu", '#include <cutlass/gemm.h>\nint x;\n', "cpp")
    findings, _ = check_source(source, [check_by_id("ROCM005")])
    (finding,) = findings
    assert (finding.line, finding.col, finding.end_line, finding.end_col) == (1, 0, 1, len("#include <cutlass/gemm.h>"))


@pytest.mark.parametrize(
    "code, check_id, lines",
    [
        # The graph context, the synchronising call and the partial function under other names.
        ("from torch.cuda import graph as capture\nwith capture(g):\n    n = out.item()\n", "ROCM010", [3]),
        ("import torch\ncg = torch.cuda.graph\nwith cg(g):\n    torch.cuda.synchronize()\n", "ROCM010", [4]),
        ("import torch\nfrom torch.cuda import synchronize as sync\nwith torch.cuda.graph(g):\n    sync()\n", "ROCM010", [4]),
        ("import torch\nwith torch.cuda.graph(g), lock:\n    x.cpu()\n", "ROCM010", [3]),
        ("import torch\nwith torch.cuda.stream(s):\n    x.cpu()\n", "ROCM010", []),
        ("import torch\ndef f():\n    with torch.cuda.graph(g):\n        pass\nx.cpu()\n", "ROCM010", []),
        ("import torch\nfrom functools import partial as bind\nc = bind(torch.compile, mode='reduce-overhead')\n", "ROCM002", [3]),
        ("from importlib import import_module as load\nfa = load('flash_attn')\n", "ROCM011", [2]),
    ],
)
def test_python_names_reached_through_aliases_are_resolved(code, check_id, lines):
    findings, problems = check_source(SourceFile("m.py", code, "python"), select_checks([check_id], preview=True))
    assert problems == [] and [f.line for f in findings] == lines


def test_code_over_several_lines_is_quoted_on_one_line_in_a_message():
    from rocmlint.catalog.loader import load_catalog

    text = textwrap.dedent("""\
        import torch

        if (torch.version.cuda is None
                or not torch.cuda.is_available()):
            raise RuntimeError("this benchmark needs a GPU")
        """)
    checks = [c for c in load_catalog() if c.id == "ROCM102"]
    findings, _ = check_source(SourceFile("bench.py", text, "python"), checks)
    assert [(f.line, f.end_line) for f in findings] == [(3, 4)]
    assert findings[0].message.startswith("`torch.version.cuda is None or not torch.cuda.is_available()` decides")
