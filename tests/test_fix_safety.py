"""Every safe rewrite keeps the module importable and NVIDIA behaviour identical.

Each module below is scanned with every check that has a rewrite; the safe fixes are applied;
then the original and the fixed module are both run with real PyTorch (a CPU build, where
`torch.version.hip` is None exactly as on a CUDA build), with `torch.compile` and
`Module.compile` replaced by recorders. The fixed module must run without error and make
the same calls with the same modes. Run again as a ROCm build would (`torch.version.hip`
set), the fixed module must pick the ROCm-safe mode.
"""

import textwrap

import pytest

torch = pytest.importorskip("torch")

from rocmlint.catalog.loader import load_catalog  # noqa: E402
from rocmlint.engine import check_source  # noqa: E402
from rocmlint.fixes.edits import apply_fixes  # noqa: E402
from rocmlint.source import SourceFile  # noqa: E402

REWRITING = [c for c in load_catalog() if c.fix and c.fix.rewrite]

MODULES = {
    "plain": """\
        import torch
        model = torch.nn.Linear(2, 2)
        out = torch.compile(model, mode="reduce-overhead")
        """,
    "decorator through an alias": """\
        import torch as T

        @T.compile(mode="reduce-overhead", fullgraph=True)
        def step(x):
            return x * 2
        """,
    "callee imported from torch": """\
        from torch import compile as tc

        def build(m):
            return tc(m, mode="reduce-overhead")

        build(object())
        """,
    "callee imported inside the function": """\
        def build(m):
            from torch import compile as tc
            return tc(m, mode="max-autotune")

        build(object())
        """,
    "torch bound in another function only": """\
        def setup():
            import torch
            return torch

        def build(m):
            return m.compile(mode="reduce-overhead")

        build(RECORDING_MODULE)
        """,
    "module constant": """\
        import torch

        MODE = "reduce-overhead"

        class Runner:
            def build(self, m):
                return torch.compile(m, mode=MODE)

        Runner().build(object())
        """,
    "torch imported after a module-level call": """\
        from torch import compile as tc
        first = tc(object(), mode="max-autotune")
        import torch
        second = torch.compile(object(), mode="reduce-overhead")
        """,
    "lambda and partial": """\
        import functools
        import torch
        make = lambda m: torch.compile(m, mode="reduce-overhead")
        make(object())
        compiler = functools.partial(torch.compile, mode="max-autotune")
        compiler(object())
        """,
}


class _Recorder:
    def __init__(self):
        self.calls = []

    def compile(self, model=None, **kwargs):
        self.calls.append(kwargs.get("mode"))
        if model is None:
            return lambda fn: fn
        return model


def _run(code: str, hip: str | None, monkeypatch) -> list:
    recorder = _Recorder()
    module_recorder = _Recorder()
    with monkeypatch.context() as patch:
        patch.setattr(torch, "compile", recorder.compile)
        patch.setattr(torch.version, "hip", hip)
        exec(compile(code, "<module>", "exec"), {"__name__": "sample", "RECORDING_MODULE": module_recorder})
    return recorder.calls + module_recorder.calls


@pytest.mark.parametrize("name", MODULES)
def test_safe_fixes_keep_the_module_running_and_nvidia_unchanged(name, monkeypatch):
    code = textwrap.dedent(MODULES[name])
    findings, problems = check_source(SourceFile("sample.py", code, "python"), REWRITING)
    assert problems == [] and findings, "every module here has a finding"
    fixed, applied = apply_fixes(code, findings, unsafe=False)
    compile(fixed, "<fixed>", "exec")
    on_nvidia = _run(code, None, monkeypatch)
    assert _run(fixed, None, monkeypatch) == on_nvidia
    # As a ROCm build: each applied fix turned one graph-capturing mode into a safe one.
    graph_modes = ("reduce-overhead", "max-autotune")
    on_rocm = _run(fixed, "6.4.0", monkeypatch)
    assert sum(m in graph_modes for m in on_rocm) == sum(m in graph_modes for m in on_nvidia) - applied, on_rocm
    # Unsafe fixes too must leave a module that runs and behaves the same on NVIDIA.
    fixed_all, _ = apply_fixes(code, findings, unsafe=True)
    assert _run(fixed_all, None, monkeypatch) == on_nvidia


@pytest.mark.parametrize("name", ["torch bound in another function only", "torch imported after a module-level call"])
def test_no_fix_names_torch_where_it_is_not_bound(name):
    code = textwrap.dedent(MODULES[name])
    findings, _ = check_source(SourceFile("sample.py", code, "python"), REWRITING)
    unfixed = [f for f in findings if f.fix is None]
    assert unfixed and all(f.line in (2, 6) for f in unfixed)


def test_fix_adds_the_import_after_the_import_that_loads_torch():
    code = textwrap.dedent(MODULES["callee imported inside the function"])
    findings, _ = check_source(SourceFile("sample.py", code, "python"), REWRITING)
    fixed, applied = apply_fixes(code, findings, unsafe=False)
    assert applied == 1
    assert "    from torch import compile as tc\n    import torch\n" in fixed
