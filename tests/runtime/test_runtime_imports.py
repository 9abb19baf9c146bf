"""Import contracts, checked in fresh interpreters: ``import rocmlint`` and
``import rocmlint.runtime`` never import torch, and the runtime package works
(platform helpers, doctor) when torch is not installed at all."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from .helpers import REPO_ROOT, subprocess_env

# Every name the check catalog points to.
CATALOG_NAMES = [
    "gpu_available", "compile_mode", "compile", "attention", "configure_allocator",
    "set_tf32", "apply_inductor_rocm_defaults", "aiter_available", "flash_attn_func",
    "linear", "fuse_model", "add_tuned_gemm_configs", "preshuffle_linears",
]


def _run(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args, "-c", textwrap.dedent(code)],
                          env=subprocess_env(), cwd=str(REPO_ROOT),
                          capture_output=True, text=True, timeout=120)


def test_imports_do_not_load_torch():
    proc = _run('''
        import sys
        import rocmlint
        assert "torch" not in sys.modules, "import rocmlint loaded torch"
        import rocmlint.runtime as rt
        assert "torch" not in sys.modules, "import rocmlint.runtime loaded torch"
        assert "pynvml" not in sys.modules and "aiter" not in sys.modules
        import rocmlint.runtime.doctor, rocmlint.runtime.config
        assert "torch" not in sys.modules
        assert rt.compile_mode("reduce-overhead") in ("reduce-overhead", "default")
        print("ok")
    ''')
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


def test_runtime_without_torch():
    proc = _run('''
        import sys, json
        sys.modules["torch"] = None          # any "import torch" now raises ImportError
        import rocmlint.runtime as rt
        from rocmlint.runtime import doctor
        assert rt.torch_available() is False
        assert rt.is_rocm() is False and rt.gpu_available() is False
        assert rt.gpu_arch() is None and rt.aiter_available() is False
        info = rt.device_info()
        assert info["torch"] is False and info["stack"] is None
        json.dumps(info)
        assert rt.compile_mode("reduce-overhead") == "reduce-overhead"
        env = {}
        assert rt.configure_allocator(environ=env) == "" and env == {}
        try:
            rt.attention
        except ImportError as exc:
            assert "rocmlint[runtime]" in str(exc)
        else:
            raise AssertionError("attention without torch should raise ImportError")
        code = doctor.main(["--json"])
        print("EXIT", code)
    ''')
    assert proc.returncode == 0, proc.stderr
    text, _, code_line = proc.stdout.rpartition("EXIT")
    report = json.loads(text)
    assert report["device"]["torch"] is False
    assert any("not installed" in note for note in report["notes"])
    assert code_line.strip() in ("0", "1")


def test_python_dash_m_doctor():
    proc = subprocess.run([sys.executable, "-m", "rocmlint.runtime", "--json"],
                          env=subprocess_env(), cwd=str(REPO_ROOT),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    assert report["device"]["torch"] is True


@pytest.mark.parametrize("name", CATALOG_NAMES)
def test_catalog_names_exist(name):
    import rocmlint.runtime as rt

    assert callable(getattr(rt, name))
    assert name in rt.__all__ and name in dir(rt)


def test_doctor_entry_point_signature():
    import inspect

    from rocmlint.runtime.doctor import main

    params = list(inspect.signature(main).parameters)
    assert params == ["argv"]
    assert inspect.signature(main).parameters["argv"].default is None


def test_unknown_attribute():
    import rocmlint.runtime as rt

    with pytest.raises(AttributeError):
        rt.no_such_helper  # noqa: B018


def test_no_gpu_is_touched_at_import():
    """Importing every runtime module calls nothing in torch.cuda and imports
    no aiter (or transformers, until register() runs)."""
    proc = _run('''
        import sys, torch
        def touched(*args, **kwargs):
            raise AssertionError("a GPU API was called at import")
        for name in ("is_available", "init", "_lazy_init", "device_count", "current_device",
                     "get_device_properties", "synchronize"):
            setattr(torch.cuda, name, touched)
        import rocmlint.runtime as rt
        from rocmlint.runtime import (aiter_gemm, attn, config, doctor, flash_attn, fusion,
                                      ops, transformers as rocm_hf)
        import rocmlint.targets
        for name in ("attention", "flash_attn_func", "fuse_model", "preshuffle_linears",
                     "add_tuned_gemm_configs", "linear"):
            getattr(rt, name)
        assert "aiter" not in sys.modules and "transformers" not in sys.modules
        print("ok")
    ''')
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
