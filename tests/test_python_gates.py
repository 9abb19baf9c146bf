"""Python code already gated for ROCm or NVIDIA is not flagged (rocmlint.python.gates)."""

import textwrap

import pytest

from rocmlint.catalog.loader import check_by_id
from rocmlint.engine import check_source
from rocmlint.platforms import names_platform
from rocmlint.source import SourceFile

COMPILE = 'torch.compile(m, mode="reduce-overhead")'


def _flagged(code: str, check_id: str = "ROCM002") -> list[int]:
    source = SourceFile("t.py", textwrap.dedent(code), "python")
    findings, problems = check_source(source, [check_by_id(check_id)])
    assert problems == []
    return [f.line for f in findings]


@pytest.mark.parametrize(
    "test",
    [
        "torch.version.hip",
        "torch.version.hip is not None",
        "not torch.version.cuda",
        "is_rocm()",
        "IS_ROCM",
        "IS_HIP and x > 1",
        "current_platform.is_rocm()",
        "platform.is_cuda()",
        "is_hip()",
        "self.use_rocm",
        "isRocm",
        "backend == 'hip'",
        "device_vendor() == 'nvidia'",
        "HAS_AMD_GPU",
    ],
)
def test_platform_tests_gate_both_sides(test):
    code = f"""
    import torch
    if {test}:
        a = {COMPILE}
    else:
        b = {COMPILE}
    """
    assert _flagged(code) == []


@pytest.mark.parametrize(
    "test",
    ["torch.cuda.is_available()", "x.is_cuda", "sys.platform == 'linux'", "shipping", "chip_count > 0", "relationship"],
)
def test_other_tests_are_not_gates(test):
    code = f"""
    import torch
    if {test}:
        a = {COMPILE}
    """
    assert _flagged(code) == [4]


def test_elif_and_nested_branches():
    code = f"""
    import torch
    if debug:
        pass
    elif torch.version.hip:
        if fast:
            a = {COMPILE}
    else:
        b = {COMPILE}
    c = {COMPILE}
    """
    assert _flagged(code) == [10]


def test_conditional_expression_and_boolean_short_circuit():
    code = f"""
    import torch
    a = {COMPILE} if not torch.version.hip else torch.compile(m)
    b = torch.version.hip or {COMPILE}
    c = {COMPILE} if fast else m
    """
    assert _flagged(code) == [5]


def test_early_exit_gates_the_rest_of_the_block():
    code = f"""
    import torch
    def build(m):
        if torch.version.hip:
            return torch.compile(m)
        return {COMPILE}

    def other(m):
        return {COMPILE}
    """
    assert _flagged(code) == [9]


def test_the_test_itself_is_not_inside_its_gate():
    code = f"""
    import torch
    if {COMPILE} and is_rocm():
        pass
    """
    assert _flagged(code) == [3]


def test_try_except_gates_imports_but_not_calls():
    code = f"""
    import torch
    try:
        import pynvml
        m = {COMPILE}
    except Exception:
        pass
    """
    assert _flagged(code, "ROCM001") == []
    assert _flagged(code, "ROCM002") == [5]


def test_type_checking_imports_are_gated():
    code = """
    from typing import TYPE_CHECKING
    if TYPE_CHECKING:
        import pynvml
    """
    assert _flagged(code, "ROCM001") == []


def test_try_finally_without_except_is_no_guard():
    code = """
    try:
        import pynvml
    finally:
        pass
    """
    assert _flagged(code, "ROCM001") == [3]


@pytest.mark.parametrize("name", ["is_rocm", "IS_HIP", "__HIPCC__", "USE_ROCM", "isHip", "TORCH_HIP_VERSION", "on_amd_gpu", "__gfx90a__"])
def test_names_platform(name):
    assert names_platform(name)


@pytest.mark.parametrize("name", ["ship", "chip", "whip_count", "is_cuda", "cuda_available", "hipster"])
def test_names_not_platform(name):
    assert not names_platform(name)


# --- the project's own predicates, test skips and platform objects ---------------------------


def test_helper_predicates_and_flags_of_the_module():
    code = f"""
    import torch

    def is_sm_at_least_100():
        return torch.cuda.is_available() and torch.version.cuda is not None and capability() >= (10, 0)

    def use_graphs():
        if is_rocm_platform():
            return False
        return True

    IS_SM90 = torch.version.cuda and capability() == (9, 0)

    if is_sm_at_least_100():
        a = {COMPILE}
    if use_graphs():
        b = {COMPILE}
    if IS_SM90:
        c = {COMPILE}
    if helper_we_cannot_see():
        d = {COMPILE}
    """
    assert _flagged(code) == [21]


def test_predicates_imported_from_the_project(tmp_path):
    package = tmp_path / "pkg"
    (package / "utils").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "utils" / "__init__.py").write_text("")
    (package / "utils" / "platform.py").write_text(
        "import torch\n\ndef is_hopper():\n    return torch.version.cuda is not None and cap() >= (9, 0)\n\n"
        "def is_big():\n    return size() > 10\n"
    )
    (package / "model.py").write_text(
        "import torch\nfrom pkg.utils.platform import is_hopper, is_big\nfrom .utils import platform as plat\n"
        "from .utils.platform import is_hopper as hop\n"
        f"if is_hopper():\n    a = {COMPILE}\n"
        f"if hop():\n    b = {COMPILE}\n"
        f"if plat.is_hopper():\n    c = {COMPILE}\n"
        f"if is_big():\n    d = {COMPILE}\n"
    )
    path = package / "model.py"
    source = SourceFile(str(path), path.read_text(), "python")
    findings, _ = check_source(source, [check_by_id("ROCM002")])
    assert [f.line for f in findings] == [12]


def test_an_imported_module_edited_within_its_modification_time_is_read_again(tmp_path):
    # What is parsed of it is kept by the hash of its bytes, the answer a kept result records,
    # not by a modification time an edit may leave as it was.
    import os

    from rocmlint.python import gates

    module, importer = tmp_path / "platform_utils.py", str(tmp_path / "main.py")
    module.write_text("import torch\n\ndef is_hopper():\n    return torch.version.hip is None\n")
    times = (module.stat().st_atime_ns, module.stat().st_mtime_ns)
    assert gates._find_imported_predicate(importer, "platform_utils.is_hopper", 0)
    module.write_text("import torch\n\ndef is_hopper():\n    return torch.ones(1) is None\n")
    os.utime(module, ns=times)
    assert not gates._find_imported_predicate(importer, "platform_utils.is_hopper", 0)


def test_predicates_of_imported_modules_keep_no_syntax_tree(tmp_path):
    """The predicates of modules read through imports stay cached for the whole scan; what is
    kept of them is names and answers, not the modules' syntax trees (they kept tens of MiB
    alive on the torch package)."""
    import ast
    import gc

    from rocmlint.python import gates

    module = tmp_path / "platform_utils.py"
    module.write_text(
        "import torch\n\nIS_HIP = torch.version.hip is not None\n\n"
        "def is_hopper():\n    if IS_HIP:\n        return False\n    return cap() >= (9, 0)\n\n"
        "def helper(x):\n    return [y * 2 for y in x if y]\n"
    )
    predicates = gates._load_module(*gates.imported_module_source(str(tmp_path / "main.py"), "platform_utils"))
    assert predicates.local.is_predicate("is_hopper", predicates)
    assert not predicates.local.is_predicate("helper", predicates)
    reachable, pending, seen = [], [predicates], {id(predicates)}
    while pending:
        item = pending.pop()
        if isinstance(item, ast.AST):
            reachable.append(item)
        for referent in gc.get_referents(item):
            if id(referent) not in seen and not isinstance(referent, type) and type(referent).__name__ not in ("module", "function", "builtin_function_or_method"):
                seen.add(id(referent))
                pending.append(referent)
    assert reachable == []


def test_skipped_tests_and_test_modules():
    code = f"""
    import pytest, torch, unittest
    from torch.testing._internal.common_utils import skipIfRocm

    @pytest.mark.skipif(not torch.version.hip, reason="ROCm only")
    def test_rocm_graphs():
        m = {COMPILE}

    @skipIfRocm
    def test_nvidia_graphs():
        m = {COMPILE}

    class T(unittest.TestCase):
        @unittest.skipIf(TEST_WITH_ROCM, "flaky")
        def test_a(self):
            m = {COMPILE}

    @pytest.mark.parametrize("backend", ["rocm", "cuda"])
    def test_both(backend):
        m = {COMPILE}
    """
    assert _flagged(code) == [20]


def test_a_module_skipped_for_one_stack():
    code = f"""
    import pytest
    from vllm.platforms import current_platform
    pytestmark = pytest.mark.skipif(not current_platform.is_rocm(), reason="ROCm only")
    m = {COMPILE}
    """
    assert _flagged(code) == []
    skipped_early = f"""
    import pytest, torch
    if not torch.version.hip:
        pytest.skip("ROCm only", allow_module_level=True)
    m = {COMPILE}
    """
    assert _flagged(skipped_early) == []


def test_is_cuda_alike_is_true_on_rocm_so_code_under_it_is_not_gated():
    code = f"""
    from vllm.platforms import current_platform
    if current_platform.is_cuda_alike():
        m = {COMPILE}
    if current_platform.is_cuda():
        n = {COMPILE}
    """
    assert _flagged(code) == [4]


def test_gates_say_why():
    code = f"""
    import torch
    if torch.version.hip:
        m = {COMPILE}
    """
    source = SourceFile("t.py", textwrap.dedent(code), "python")
    findings, _ = check_source(source, [check_by_id("ROCM002")], keep_gated=True)
    assert [f.gate for f in findings] == ["under `if torch.version.hip` (line 3)"]


@pytest.mark.parametrize(
    "relative,gated",
    [
        ("pkg/models/nvidia/ops.py", True),
        ("pkg/backends/rocm_attention.py", True),
        ("pkg/aiter_backend.py", True),
        ("tests/rocm/test_fp8.py", True),
        ("pkg/cuda_utils.py", False),
        ("amd_tools-1.0/setup.py", False),
        ("pkg/hipster.py", False),
    ],
)
def test_modules_named_for_one_stack_are_gated(tmp_path, relative, gated):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    path = tmp_path / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if relative.startswith("pkg/"):
        for parent in path.relative_to(tmp_path).parents:
            if str(parent) != ".":
                (tmp_path / parent / "__init__.py").write_text("")
    path.write_text("import torch\nw = x.to(torch.float8_e4m3fn)\n")
    source = SourceFile(str(path), path.read_text(), "python")
    findings, _ = check_source(source, [check_by_id("ROCM104")], keep_gated=True)
    assert (findings[0].gate is not None) == gated, findings[0].gate


@pytest.mark.parametrize("checkout", ["amd", "rocm", "nvidia"])
def test_the_folder_a_project_was_put_in_names_no_stack(tmp_path, checkout):
    # `~/amd/` holding a project's checkout, or a lone script in it, is not code for AMD.
    project = tmp_path / checkout
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    for path in (project / "train.py", tmp_path / "loose" / checkout / "train.py"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("import torch\nw = x.to(torch.float8_e4m3fn)\n")
        findings, _ = check_source(SourceFile(str(path), path.read_text(), "python"), [check_by_id("ROCM104")], keep_gated=True)
        assert findings and findings[0].gate is None, (path, findings)


@pytest.mark.parametrize("checkout", ["checkout", "scales", "mxfp8", "nvfp4"])
def test_folders_above_the_project_do_not_leave_uses_out(tmp_path, checkout):
    # ROCM104 leaves out uses in folders named for OCP-by-specification formats, or for dtype
    # checks; the folder a checkout was cloned into (CI's `checkout/`) is no such folder.
    project = tmp_path / checkout / "repo"
    code = "import torch\nw = x.to(torch.float8_e4m3fn)\n"
    _write_project_file(project, "model/layers.py", code)
    assert _rocm104_lines(project / "model" / "layers.py") == [2]
    # ... while the same folder inside the project still does.
    _write_project_file(project, f"model/{checkout}/layers.py", code)
    assert _rocm104_lines(project / "model" / checkout / "layers.py") == []


def _write_project_file(project, relative, text):
    project.mkdir(parents=True, exist_ok=True)
    (project / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    path = project / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _rocm104_lines(path) -> list[int]:
    findings, problems = check_source(SourceFile(str(path), path.read_text(), "python"), [check_by_id("ROCM104")])
    assert problems == []
    return [f.line for f in findings]


def test_imports_of_the_projects_own_modules_are_gated(tmp_path):
    (tmp_path / "flash_attn").mkdir()
    (tmp_path / "flash_attn" / "__init__.py").write_text("")
    inner = tmp_path / "flash_attn" / "layers.py"
    inner.write_text("from flash_attn.ops import rotary\n")
    findings, _ = check_source(SourceFile(str(inner), inner.read_text(), "python"), [check_by_id("ROCM011")], keep_gated=True)
    assert findings and "own module" in findings[0].gate
    (tmp_path / "tests").mkdir()
    test = tmp_path / "tests" / "test_layers.py"
    test.write_text("from flash_attn.layers import rotary\n")
    findings, _ = check_source(SourceFile(str(test), test.read_text(), "python"), [check_by_id("ROCM011")], keep_gated=True)
    assert findings and "own module" in findings[0].gate
    user = tmp_path / "app.py"
    user.write_text("import aiter_client\nfrom flash_attn import flash_attn_func\n")
    findings, _ = check_source(SourceFile(str(tmp_path / "other" / "deeper" / "app.py"), user.read_text(), "python"), [check_by_id("ROCM011")])
    assert [f.line for f in findings] == [2]


def test_code_in_a_class_or_function_named_for_rocm_is_gated():
    code = """
    import torch
    class ROCmConfigHeuristic:
        def pick(self):
            if torch.cuda.get_device_capability() >= (9, 5):
                return 1
    def nvidia_gpu_count():
        return torch.cuda.get_device_capability() >= (9, 0)
    """
    assert _flagged(code, "ROCM103") == [8]


PROBE = '''\
import subprocess
import torch

IS_ROCM = torch.version.hip is not None


def {name}():
    return subprocess.check_output(["nvcc", "-V"], text=True)

'''


@pytest.mark.parametrize(
    ("path", "name", "calls", "gated"),
    [
        ("lib.py", "_nvcc_version", "if not IS_ROCM:\n    v = _nvcc_version()\n", True),
        ("setup.py", "nvcc_version", "if not IS_ROCM:\n    v = nvcc_version()\nelse:\n    v = None\n", True),
        ("lib.py", "nvcc_version", "if not IS_ROCM:\n    v = nvcc_version()\n", False),  # others may import and call it
        ("lib.py", "_nvcc_version", "if not IS_ROCM:\n    v = _nvcc_version()\nw = _nvcc_version()\n", False),
        ("lib.py", "_nvcc_version", "if not IS_ROCM:\n    v = _nvcc_version()\nhooks = [_nvcc_version]\n", False),
        ("lib.py", "_nvcc_version", "", False),  # never called here: nothing says where it runs
    ],
)
def test_a_function_called_only_under_a_platform_test_is_gated_where_nothing_else_can_call_it(path, name, calls, gated):
    code = PROBE.format(name=name) + calls
    source = SourceFile(path, code, "python")
    findings, problems = check_source(source, [check_by_id("ROCM106")], keep_gated=True)
    assert problems == [] and [f.line for f in findings] == [8]
    if gated:
        assert findings[0].gate.startswith(f"every call of `{name}()` in this file is code for one GPU stack (line ")
    else:
        assert findings[0].gate is None
