"""Python reachability across modules: a module of a project that builds or runs for AMD, which
only the NVIDIA side of the project's own dispatchers imports, never runs on AMD; its findings
are gated with the import that decides it (rocmlint.project.python_imports,
rocmlint.python.gates.not_on_amd). Scanned through the CLI entry point as a user would."""

import ast
import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import write_files as _project
from rocmlint.cli import main
from rocmlint.project.python_imports import _IMPORT, _import_statements, _on_an_import_line, _standing_alone, module_name
from rocmlint.python.gates import not_on_amd, value_on_amd, value_on_nvidia
from rocmlint.python.index import PythonIndex

FP8 = "import torch\n\nw = weight.to(torch.float8_e4m3fn)\n"
DISPATCH = """\
    import torch

    if torch.version.hip:
        from .triton_kernels import run
    else:
        from .cutlass_kernels import run
    """


def _scan(root) -> tuple[set, dict]:
    out = os.path.join(os.path.dirname(os.path.abspath(root)), "report.json")
    code = main(["scan", str(root), "--format", "json", "--output", out, "--show-gated", "--exit-zero", "-q",
                 "--preview", "--select", "ROCM104", "--no-cache"])
    assert code == 0
    with open(out, encoding="utf-8") as handle:
        document = json.load(handle)
    reported = {os.path.relpath(f["path"], root).replace(os.sep, "/") for f in document["findings"]}
    gated = {os.path.relpath(f["path"], root).replace(os.sep, "/"): f["gate"] for f in document["gated"]}
    return reported, gated


def _dual_vendor(tmp_path, **extra) -> str:
    files = {
        "proj/setup.py": "from setuptools import setup\nCOMPILER = 'hipcc'  # the ROCm build\nsetup(name='pkg')\n",
        "proj/pkg/__init__.py": "",
        "proj/pkg/dispatch.py": DISPATCH,
        "proj/pkg/cutlass_kernels.py": FP8,
        "proj/pkg/triton_kernels.py": FP8,
    }
    files.update(extra)
    return _project(tmp_path, files)


def test_a_module_only_the_nvidia_side_imports_is_gated_with_the_import(tmp_path):
    root = os.path.join(_dual_vendor(tmp_path), "proj")
    reported, gated = _scan(root)
    assert "pkg/cutlass_kernels.py" not in reported
    assert gated["pkg/cutlass_kernels.py"].startswith("imported only by code that never runs on AMD: pkg/dispatch.py:6")
    assert "not taken on AMD" in gated["pkg/cutlass_kernels.py"]


def test_a_module_the_amd_side_imports_is_reported(tmp_path):
    root = os.path.join(_dual_vendor(tmp_path), "proj")
    reported, gated = _scan(root)
    assert "pkg/triton_kernels.py" in reported


@pytest.mark.parametrize("extra", [
    {"proj/pkg/other.py": "from .cutlass_kernels import run\n"},  # an import AMD runs too
    {"proj/pkg/registry.py": "BACKENDS = {'cutlass': 'pkg.cutlass_kernels:run'}\n"},  # loaded by name
    {"proj/pkg/lazy.py": "import importlib\nmod = importlib.import_module('.cutlass_kernels', 'pkg')\n"},
    {"proj/pkg/cutlass_kernels.py": FP8 + "\nif __name__ == '__main__':\n    print(w)\n"},  # a script too
    # a list of module names, loaded by name beside them
    {"proj/pkg/names.py": "import importlib\nKERNELS = ['triton_kernels', \"cutlass_kernels\"]\n"
                          "MODS = [importlib.import_module('.' + k, 'pkg') for k in KERNELS]\n"},
    {"proj/pkg/lazy.py": "def __getattr__(name):\n    return _load({'run': \"cutlass_kernels\"}[name])\n"},  # lazy
    {"proj/pkg/other.py": "PATCHED = 'pkg.cutlass_kernels.run'\n"},  # its dotted name in the package's code
])
def test_other_ways_to_reach_the_module_keep_it_reported(tmp_path, extra):
    root = os.path.join(_dual_vendor(tmp_path, **extra), "proj")
    reported, gated = _scan(root)
    assert "pkg/cutlass_kernels.py" in reported


# Lines made of pieces of import statements, and of lines that only look like them.
_LINE_STARTS = ["", " ", "\t", "    "]
_LINE_HEADS = ["import ", "from a import ", "from . import ", "from a import (", "x = 'import'", "important", ")", "#", ""]
_LINE_RESTS = ["", "a", "b.c", "a, b", "a as b", "(", ")", "a)", ";", "; import a", "# import a", "import", ","]


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.tuples(*(st.sampled_from(p) for p in (_LINE_STARTS, _LINE_HEADS, _LINE_RESTS))), max_size=12))
def test_import_statements_are_those_the_expression_finds_everywhere(lines):
    # The expression is tried only at lines holding `import`: no match may be lost or moved.
    padded = "\n" + "\n".join("".join(line) for line in lines)
    expected = [(m.start(), m.end(), m.groups()) for m in _IMPORT.finditer(padded)]
    assert [(m.start(), m.end(), m.groups()) for m in _import_statements(padded)] == expected


def test_module_names_are_the_same_with_folders_kept_across_files(tmp_path):
    _project(tmp_path, {"pkg/__init__.py": "", "pkg/sub/__init__.py": "", "pkg/sub/m.py": "", "pkg/n.py": "", "loose/o.py": ""})
    paths = [str(tmp_path / p) for p in ("pkg/sub/m.py", "pkg/n.py", "pkg/sub/__init__.py", "loose/o.py")]
    kept: dict = {}
    assert [module_name(p, kept) for p in paths] == [module_name(p) for p in paths] == ["pkg.sub.m", "pkg.n", "pkg.sub", "o"]
    assert kept[str(tmp_path / "pkg" / "sub")] is True and kept[str(tmp_path / "loose")] is False


def test_longer_names_that_hold_the_module_name_are_not_mentions_of_it(tmp_path):
    root = os.path.join(_dual_vendor(tmp_path, **{
        "proj/pkg/other.py": "my_cutlass_kernels = 1\ncutlass_kernels_v2 = 'xcutlass_kernels'\nx = obj.cutlass_kernels2\n",
    }), "proj")
    reported, gated = _scan(root)
    assert "pkg/cutlass_kernels.py" in gated


def test_tests_and_benchmarks_that_import_it_say_nothing_of_the_package(tmp_path):
    root = os.path.join(_dual_vendor(tmp_path, **{
        "proj/tests/test_cutlass.py": "from pkg.cutlass_kernels import run\n\ndef test_run():\n    run()\n",
        "proj/tests/test_mock.py": "from unittest import mock\nmock.patch('pkg.cutlass_kernels.run')\n",  # a mock target
        "proj/benchmarks/bench.py": "from pkg.cutlass_kernels import run\n",
    }), "proj")
    reported, gated = _scan(root)
    assert "pkg/cutlass_kernels.py" in gated


@pytest.mark.parametrize("other", [
    # The last part as a string where nothing loads modules by name: vLLM's `maybe_prefix(prefix,
    # "model")`, `".layers" not in name`.
    "prefix = maybe_prefix(prefix, 'cutlass_kernels')\nskip = '.cutlass_kernels' not in name\n",
    # The same in a file that loads modules by name, but outside the module's folder and not naming its package.
    None,
    # Glob patterns, another package's module of the same name, an attribute before a colon.
    "FILES = ['*.cutlass_kernels']\nNAME = 'other.cutlass_kernels'\nif x == self.cutlass_kernels:\n    pass\n",
    # Documentation between backquotes.
    '"""Mirrors ``pkg.cutlass_kernels``."""\n',
])
def test_strings_that_cannot_load_the_module_do_not_keep_it_reported(tmp_path, other):
    extra = {"proj/pkg/other.py": other} if other is not None else {
        "proj/pkg/sub/__init__.py": "",
        "proj/pkg/sub/loader.py": "import importlib\nNAMES = ['cutlass_kernels']\nMOD = importlib.import_module('.' + NAMES[0], 'x')\n",
        "proj/pkg/sub/user.py": "from ..dispatch import run\n",
    }
    root = os.path.join(_dual_vendor(tmp_path, **extra), "proj")
    reported, gated = _scan(root)
    assert "pkg/cutlass_kernels.py" in gated


def test_a_module_imported_back_by_one_it_imports_is_decided_by_its_other_importers(tmp_path):
    # model.py imports decode.py at its top; decode.py imports model.py back inside a function
    # (vLLM's per-platform model packages): the import back says nothing either way.
    root = os.path.join(_dual_vendor(tmp_path, **{
        "proj/pkg/mono/__init__.py": "",
        "proj/pkg/mono/model.py": "from .decode import step\n",
        "proj/pkg/mono/decode.py": FP8 + "\ndef step():\n    from .model import step as again\n    return again\n",
        "proj/pkg/layer.py": "import torch\n\nif not torch.version.hip:\n    from .mono.model import step\n",
    }), "proj")
    reported, gated = _scan(root)
    assert "pkg/mono/decode.py" not in reported
    assert gated["pkg/mono/decode.py"].startswith("imported only by code that never runs on AMD: pkg/mono/model.py:1")
    reached = os.path.join(_dual_vendor(tmp_path / "b", **{
        "proj/pkg/mono/__init__.py": "",
        "proj/pkg/mono/model.py": "from .decode import step\n",
        "proj/pkg/mono/decode.py": FP8 + "\ndef step():\n    from .model import step as again\n    return again\n",
        "proj/pkg/layer.py": "from .mono.model import step\n",
    }), "proj")
    reported, gated = _scan(reached)
    assert "pkg/mono/decode.py" in reported


def test_followed_through_a_module_that_is_itself_nvidia_only(tmp_path):
    root = os.path.join(_dual_vendor(tmp_path, **{
        "proj/pkg/cutlass_kernels.py": "from .cutlass_helpers import table\n",
        "proj/pkg/cutlass_helpers.py": FP8,
    }), "proj")
    reported, gated = _scan(root)
    assert "pkg/cutlass_helpers.py" not in reported
    assert ("(in pkg/cutlass_kernels.py, which is imported only by code that never runs on AMD: pkg/dispatch.py:6"
            in gated["pkg/cutlass_helpers.py"])


def test_a_project_with_no_amd_side_keeps_every_finding(tmp_path):
    root = _project(tmp_path, {
        "proj/setup.py": "from setuptools import setup\nsetup(name='pkg')\n",
        "proj/pkg/__init__.py": "",
        "proj/pkg/dispatch.py": "import torch\n\nif torch.version.cuda:\n    from .cutlass_kernels import run\n",
        "proj/pkg/cutlass_kernels.py": FP8,
    })
    reported, gated = _scan(os.path.join(root, "proj"))
    assert "pkg/cutlass_kernels.py" in reported


def _value(source: str):
    return value_on_amd(ast.parse(source, mode="eval").body)


@pytest.mark.parametrize("source, value", [
    ("torch.version.hip", True), ("torch.version.cuda", False), ("torch.version.hip is not None", True),
    ("torch.version.cuda is None", True), ("current_platform.is_rocm()", True), ("current_platform.is_cuda()", False),
    ("not IS_HIP", False), ("_is_cuda()", False), ("is_cuda_alike()", True), ("torch.cuda.is_available()", True),
    ("IS_ROCM and x", None), ("IS_ROCM or x", True), ("use_cuda", None), ("torch.cuda.get_device_capability() >= (9, 0)", None),
    ("is_nvidia_gpu()", False), ("on_amd_gpu", True),
])
def test_the_value_of_a_platform_test_on_amd(source, value):
    assert _value(source) is value


@pytest.mark.parametrize("code, runs", [
    ("if torch.version.hip:\n    x = 1\nelse:\n    TARGET\n", False),
    ("if torch.version.hip:\n    TARGET\n", True),
    ("if current_platform.is_cuda():\n    TARGET\n", False),
    ("def f():\n    if not current_platform.is_cuda():\n        return\n    TARGET\n", False),
    ("def f():\n    if use_cuda:\n        return\n    TARGET\n", True),
    ("@pytest.mark.skipif(torch.version.hip is not None, reason='x')\ndef test_f():\n    TARGET\n", False),
    ("@skipIfRocm\ndef test_f():\n    TARGET\n", False),
    ("y = IS_CUDA and TARGET\n", False),
    ("y = IS_CUDA or TARGET\n", True),
])
def test_what_never_runs_on_amd(code, runs):
    tree = ast.parse(code)
    index = PythonIndex(tree)
    target = next(n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "TARGET")
    assert (not_on_amd(target, index.parents) is None) is runs


@pytest.mark.parametrize("line", ["import cutlass.cute as cute", "from deep_gemm import fp8_gemm_nt", "import flash_attn_interface"])
def test_a_module_that_imports_an_nvidia_only_package_at_its_top_never_runs_on_amd(tmp_path, line):
    root = os.path.join(_dual_vendor(tmp_path, **{
        "proj/pkg/sm90_kernels.py": line + "\n" + FP8,
        "proj/tests/test_sm90.py": line + "\n" + FP8,
        "proj/pkg/lazy.py": "def load():\n    " + line + "\n" + FP8,
    }), "proj")
    reported, gated = _scan(root)
    assert "pkg/sm90_kernels.py" not in reported and "tests/test_sm90.py" not in reported
    assert gated["pkg/sm90_kernels.py"].startswith(f"imports `{line.split()[1].split('.')[0]}` at its top level (line 1)")
    assert "pkg/lazy.py" in reported  # imported only when load() runs


def test_a_module_that_imports_an_extension_only_an_nvidia_only_package_builds(tmp_path):
    """FlashAttention's flash_attn/ops/fused_dense.py imports fused_dense_lib, which only
    csrc/fused_dense_lib/setup.py builds, with CUDA and no ROCm side."""
    root = os.path.join(_dual_vendor(tmp_path, **{
        "proj/csrc/fused_dense_lib/setup.py": (
            "from torch.utils.cpp_extension import CUDAExtension\n"
            "setup(ext_modules=[CUDAExtension(name='fused_dense_lib', sources=['fused_dense_cuda.cu'])])\n"),
        "proj/pkg/fused_dense.py": "import fused_dense_lib as fused_dense_cuda\n" + FP8,
        "proj/pkg/dense_other.py": "import fused_dense_library\n" + FP8,
    }), "proj")
    reported, gated = _scan(root)
    assert gated["pkg/fused_dense.py"].startswith(
        "imports `fused_dense_lib` at its top level (line 1): an extension only csrc/fused_dense_lib/setup.py builds, for NVIDIA")
    assert "pkg/dense_other.py" in reported


# --- the other way round: ROCm-only code that an NVIDIA run reaches (ROCM012, ROCM013) ---------

ROCM_OPS = "import torch\nimport aiter\n\ndef gemm(a, b):\n    return aiter.gemm(a, b)\n"
GUARDED = "try:\n    import aiter\nexcept ImportError:\n    aiter = None\n"


def _scan_nvidia_side(root) -> tuple[dict, dict]:
    out = os.path.join(os.path.dirname(os.path.abspath(root)), "report.json")
    code = main(["scan", str(root), "--format", "json", "--output", out, "--show-gated", "--exit-zero", "-q",
                 "--preview", "--select", "ROCM012,ROCM013", "--no-cache"])
    assert code == 0
    with open(out, encoding="utf-8") as handle:
        document = json.load(handle)
    reported = {(os.path.relpath(f["path"], root).replace(os.sep, "/"), f["code"]) for f in document["findings"]}
    gated = {(os.path.relpath(f["path"], root).replace(os.sep, "/"), f["code"]): f["gate"] for f in document["gated"]}
    return reported, gated


def test_an_aiter_module_only_the_amd_side_imports_is_gated_whatever_its_name(tmp_path):
    root = os.path.join(_dual_vendor(tmp_path, **{
        "proj/pkg/rocm_ops.py": ROCM_OPS,
        "proj/pkg/layer.py": "import torch\n\nif torch.version.hip:\n    from .rocm_ops import gemm\n",
    }), "proj")
    reported, gated = _scan_nvidia_side(root)
    assert ("pkg/rocm_ops.py", "ROCM013") not in reported
    assert gated[("pkg/rocm_ops.py", "ROCM013")].startswith("imported only by code that never runs on NVIDIA: pkg/layer.py:4")


@pytest.mark.parametrize("layer", [
    "from .rocm_ops import gemm\n",  # at the top of a module NVIDIA runs
    "import torch\n\ndef build():\n    from .rocm_ops import gemm\n    return gemm\n",  # a function NVIDIA may call
])
def test_an_aiter_module_that_nvidia_imports_is_reported_whatever_its_name(tmp_path, layer):
    root = os.path.join(_dual_vendor(tmp_path, **{"proj/pkg/rocm_ops.py": ROCM_OPS, "proj/pkg/layer.py": layer}), "proj")
    reported, gated = _scan_nvidia_side(root)
    assert ("pkg/rocm_ops.py", "ROCM013") in reported


def test_an_import_of_an_aiter_module_inside_try_keeps_nvidia_running(tmp_path):
    root = os.path.join(_dual_vendor(tmp_path, **{
        "proj/pkg/rocm_ops.py": ROCM_OPS,
        "proj/pkg/layer.py": "try:\n    from .rocm_ops import gemm\nexcept ImportError:\n    gemm = None\n",
    }), "proj")
    reported, gated = _scan_nvidia_side(root)
    assert "inside `try:`" in gated[("pkg/rocm_ops.py", "ROCM013")]


def test_an_import_error_guard_in_a_module_named_for_rocm_is_decided_by_its_importers(tmp_path):
    reached = os.path.join(_dual_vendor(tmp_path / "a", **{
        "proj/pkg/rocm_attention.py": GUARDED,
        "proj/pkg/layer.py": "from .rocm_attention import aiter\n",
    }), "proj")
    reported, gated = _scan_nvidia_side(reached)
    assert ("pkg/rocm_attention.py", "ROCM012") in reported
    amd_only = os.path.join(_dual_vendor(tmp_path / "b", **{
        "proj/pkg/rocm_attention.py": GUARDED,
        "proj/pkg/layer.py": "import torch\n\nif torch.version.hip:\n    from .rocm_attention import aiter\n",
    }), "proj")
    reported, gated = _scan_nvidia_side(amd_only)
    assert "never runs on NVIDIA" in gated[("pkg/rocm_attention.py", "ROCM012")]


def test_a_module_that_imports_aiter_at_its_top_never_runs_on_nvidia(tmp_path):
    root = os.path.join(_dual_vendor(tmp_path, **{
        "proj/pkg/kernels.py": "import aiter\n\ndef load():\n" + "".join("    " + line + "\n" for line in GUARDED.splitlines()),
        "proj/pkg/layer.py": "from .kernels import load\n",
    }), "proj")
    reported, gated = _scan_nvidia_side(root)
    assert ("pkg/kernels.py", "ROCM013") in reported  # never gated by itself
    assert gated[("pkg/kernels.py", "ROCM012")].startswith("imports `aiter` at its top level (line 1)")


@pytest.mark.parametrize("source, value", [
    ("torch.version.hip", False), ("torch.version.cuda", True), ("_use_aiter", False), ("on_gfx950()", False),
    ("not is_rocm()", True), ("torch.cuda.is_available()", True), ("use_flash", None),
])
def test_the_value_of_a_platform_test_on_nvidia(source, value):
    assert value_on_nvidia(ast.parse(source, mode="eval").body) is value


def test_a_chain_of_six_imports_is_followed(tmp_path):
    # vLLM's AMD decode packages sit five imports below their platform test: m2 imports m1, m3
    # imports m2, ... m6 imports m5, and layer.py imports m6 on NVIDIA only.
    files = {"proj/pkg/deep/__init__.py": "", "proj/pkg/deep/m1.py": FP8}
    for i in range(2, 7):
        files[f"proj/pkg/deep/m{i}.py"] = f"from .m{i - 1} import w\n"
    files["proj/pkg/layer.py"] = "import torch\n\nif not torch.version.hip:\n    from .deep.m6 import w\n"
    root = os.path.join(_dual_vendor(tmp_path, **files), "proj")
    reported, gated = _scan(root)
    assert "pkg/deep/m1.py" not in reported
    assert gated["pkg/deep/m1.py"].startswith("imported only by code that never runs on AMD: pkg/deep/m2.py:1")


@pytest.fixture(scope="module")
def name_graph(tmp_path_factory):
    from rocmlint.project.python_imports import ImportGraph

    root = tmp_path_factory.mktemp("names")
    _project(root, {"pyproject.toml": "", "pkg/__init__.py": "", "pkg/m.py": "", "pkg/n.py": ""})
    return ImportGraph(str(root))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from([
    "pkg.a", "pkg.a.b", "pkg.b", "pkg.a-b", "pkg", ".", "a", "b", "_", "-", "`", " ", "\n", "x", "é", "²", "from ", "import ", '"', ":",
]), max_size=30), min_size=2, max_size=2))
def test_the_index_of_dotted_names_finds_what_a_plain_search_finds(name_graph, texts):
    # _named_in_text looks each module up in one index of the package's dotted names rather
    # than searching every file for each module asked: it must find the same places.
    files = sorted(p for p in name_graph.texts if p.endswith(("m.py", "n.py")))
    name_graph.texts.update({path: "".join(parts) for path, parts in zip(files, texts)})
    name_graph._dotted.clear()
    name_graph._package_files.clear()
    index = name_graph._dotted_names("pkg.")
    for module in ("pkg.a", "pkg.a.b", "pkg.b", "pkg.a.a", "pkg.x_a"):
        # The plain search the index replaced (still used for names that are not all words).
        expected = {(path, at) for path in files for at in _standing_alone(name_graph.texts[path], module)}
        assert set(index.get(module, ())) == expected, module
    # A module no import statement spells (a folder `a-b` reached by relative imports) is
    # searched as written.
    texts = [name_graph.texts[path] for path in files]
    named = any(not _on_an_import_line(text, at) for text in texts for at in _standing_alone(text, "pkg.a-b"))
    assert name_graph._find_name("pkg.a-b", os.path.dirname(files[0])) == named
