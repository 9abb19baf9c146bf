"""Configuration guards: NVIDIA/CPU behaviour unchanged, ROCm-safe on ROCm."""

from __future__ import annotations

import warnings

import pytest
import torch

from rocmlint.runtime import (
    apply_inductor_rocm_defaults,
    compile,
    compile_mode,
    config,
    configure_allocator,
    set_cudnn_benchmark,
    set_tf32,
)


@pytest.fixture
def restore_backend_flags():
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
             torch.backends.cudnn.benchmark)
    yield
    (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
     torch.backends.cudnn.benchmark) = saved


# --- compile ------------------------------------------------------------------

@pytest.mark.parametrize("mode", [None, "default", "reduce-overhead", "max-autotune",
                                  "max-autotune-no-cudagraphs"])
def test_compile_mode_unchanged_off_rocm(mode):
    assert compile_mode(mode) == mode


@pytest.mark.parametrize("mode,expected", [
    (None, None), ("default", "default"), ("reduce-overhead", "default"),
    ("max-autotune", "max-autotune-no-cudagraphs"),
    ("max-autotune-no-cudagraphs", "max-autotune-no-cudagraphs"),
])
def test_compile_mode_on_rocm(fake_rocm, mode, expected):
    assert compile_mode(mode) == expected


@pytest.mark.parametrize("check,mode", [("ROCM002", "reduce-overhead"),
                                        ("ROCM101", "max-autotune")])
def test_compile_mode_gives_the_fix_its_answer(fake_rocm, check, mode):
    # The check's rewrite picks a mode when torch.version.hip is set; the
    # runtime helper must pick the same one on ROCm.
    import re

    import yaml

    from .helpers import REPO_ROOT

    (path,) = (REPO_ROOT / "checks").glob(f"{check}-*.yaml")
    template = yaml.safe_load(path.read_text(encoding="utf-8"))["fix"]["rewrite"]["template"]
    rocm_mode = re.match(r'\("([^"]+)" if \$\{import:torch\}\.version\.hip else', template)
    assert rocm_mode, template
    assert compile_mode(mode) == rocm_mode.group(1)


def _capture_compile(monkeypatch):
    seen = {}

    def fake_compile(model, **kwargs):
        seen["model"], seen["kwargs"] = model, kwargs
        return model

    monkeypatch.setattr(torch, "compile", fake_compile)
    return seen


def test_compile_passes_mode_through_off_rocm(monkeypatch):
    seen = _capture_compile(monkeypatch)
    fn = lambda x: x  # noqa: E731
    assert compile(fn, mode="reduce-overhead", fullgraph=True) is fn
    assert seen["kwargs"] == {"mode": "reduce-overhead", "fullgraph": True}
    compile(fn)
    assert seen["kwargs"] == {}


def test_compile_on_rocm_drops_cudagraphs(monkeypatch, fake_rocm):
    seen = _capture_compile(monkeypatch)
    fn = lambda x: x  # noqa: E731
    compile(fn, mode="reduce-overhead")
    assert seen["kwargs"] == {"mode": "default"}
    compile(fn, options={"triton.cudagraphs": True, "max_autotune": True})
    assert seen["kwargs"]["options"] == {"triton.cudagraphs": False, "max_autotune": True}


def test_compile_as_decorator(monkeypatch, fake_rocm):
    seen = _capture_compile(monkeypatch)

    @compile(mode="reduce-overhead")
    def f(x):
        return x + 1

    assert seen["model"] is f and seen["kwargs"] == {"mode": "default"}


def test_compile_really_compiles():
    compiled = compile(lambda x: x * 2 + 1, backend="eager")
    assert torch.equal(compiled(torch.arange(4.0)), torch.arange(4.0) * 2 + 1)


# --- TF32 / cuDNN ---------------------------------------------------------------

def test_set_tf32_off_rocm(restore_backend_flags):
    assert set_tf32(True) is True
    assert torch.backends.cuda.matmul.allow_tf32 is True
    assert torch.backends.cudnn.allow_tf32 is True
    assert set_tf32(False) is True
    assert torch.backends.cuda.matmul.allow_tf32 is False
    assert torch.backends.cudnn.allow_tf32 is False


def test_set_tf32_noop_on_rocm(restore_backend_flags, fake_rocm):
    torch.backends.cuda.matmul.allow_tf32 = False
    assert set_tf32(True) is False
    assert torch.backends.cuda.matmul.allow_tf32 is False


def test_set_cudnn_benchmark(restore_backend_flags, monkeypatch):
    assert set_cudnn_benchmark(True) is True and torch.backends.cudnn.benchmark is True
    torch.backends.cudnn.benchmark = False
    monkeypatch.setattr(config._device, "_IS_ROCM", True)
    assert set_cudnn_benchmark(True) is False and torch.backends.cudnn.benchmark is False


# --- inductor -------------------------------------------------------------------

def test_inductor_defaults_noop_off_rocm():
    import torch._inductor.config as ic

    before = (ic.triton.cudagraphs, ic.triton.cudagraph_trees, ic.memory_planning,
              ic.max_autotune_gemm_backends)
    assert apply_inductor_rocm_defaults() == {}
    assert before == (ic.triton.cudagraphs, ic.triton.cudagraph_trees, ic.memory_planning,
                      ic.max_autotune_gemm_backends)


def test_inductor_defaults_on_rocm(fake_rocm):
    import torch._inductor.config as ic

    # The config module's own patch(): monkeypatch's undo on its sub-config
    # proxy leaves "triton.cudagraphs" hidden, and Dynamo reads it later.
    with ic.patch({"triton.cudagraphs": True, "triton.cudagraph_trees": True,
                   "memory_planning": True, "max_autotune_gemm_backends": "ATEN,TRITON"}):
        changed = apply_inductor_rocm_defaults()
        assert changed == {"triton.cudagraphs": False, "triton.cudagraph_trees": False,
                           "memory_planning": False, "max_autotune_gemm_backends": "ATEN"}
        assert ic.triton.cudagraphs is False and ic.memory_planning is False
        assert apply_inductor_rocm_defaults() == {}  # idempotent
        ic.max_autotune_gemm_backends = "ATEN,TRITON"
        assert apply_inductor_rocm_defaults(aten_gemm=False) == {}
    assert ic.triton.cudagraphs is False  # restored, and still readable


# --- allocator ------------------------------------------------------------------

def test_allocator_noop_off_rocm_without_arguments():
    env = {"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:512,garbage_collection_threshold:0.6"}
    assert configure_allocator(environ=env) == env["PYTORCH_CUDA_ALLOC_CONF"]
    assert env == {"PYTORCH_CUDA_ALLOC_CONF":
                   "max_split_size_mb:512,garbage_collection_threshold:0.6"}
    empty: dict[str, str] = {}
    assert configure_allocator(environ=empty) == "" and empty == {}


def test_allocator_off_rocm_sets_exactly_what_is_asked():
    env = {"PYTORCH_CUDA_ALLOC_CONF": "garbage_collection_threshold:0.6"}
    text = configure_allocator(max_split_size_mb=512, environ=env)
    assert text == "garbage_collection_threshold:0.6,max_split_size_mb:512"
    assert env == {"PYTORCH_CUDA_ALLOC_CONF": text}
    # PYTORCH_CUDA_ALLOC_CONF is read by every version (on 2.9.1 the only one
    # read for expandable_segments, pytorch/pytorch#183387).
    fresh: dict[str, str] = {}
    configure_allocator(expandable_segments=True, environ=fresh)
    assert fresh == {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}


@pytest.mark.parametrize("release,in_force", [
    ((2, 13), "0.6"),  # PYTORCH_CUDA_ALLOC_CONF first (measured on 2.13.0)
    ((2, 9), "0.7"),   # PYTORCH_ALLOC_CONF first
])
def test_allocator_keeps_the_value_in_force_and_every_reader_in_agreement(release, in_force):
    # With both variables set, torch reads one of them and ignores the other; which one
    # depends on its version.  The value in force stays in force (on NVIDIA the user's run
    # allocates as before), and both variables then say the same.
    env = {"PYTORCH_ALLOC_CONF": "garbage_collection_threshold:0.7",
           "PYTORCH_CUDA_ALLOC_CONF": "garbage_collection_threshold:0.6,backend:native"}
    text = configure_allocator(expandable_segments=True, environ=env, torch_release=release)
    assert text.startswith(f"garbage_collection_threshold:{in_force},")
    assert text.endswith("expandable_segments:True")
    assert ("backend:native" in text) == (in_force == "0.6")
    assert env == {"PYTORCH_ALLOC_CONF": text, "PYTORCH_CUDA_ALLOC_CONF": text}
    only_new = {"PYTORCH_ALLOC_CONF": "garbage_collection_threshold:0.7"}
    configure_allocator(expandable_segments=False, environ=only_new, torch_release=release)
    assert only_new["PYTORCH_CUDA_ALLOC_CONF"] == only_new["PYTORCH_ALLOC_CONF"] == \
        "garbage_collection_threshold:0.7,expandable_segments:False"


def test_allocator_before_torch_2_9_leaves_the_unread_variable_alone():
    env = {"PYTORCH_ALLOC_CONF": "garbage_collection_threshold:0.7"}
    text = configure_allocator(max_split_size_mb=512, environ=env, torch_release=(2, 8))
    assert text == "max_split_size_mb:512"
    assert env == {"PYTORCH_ALLOC_CONF": "garbage_collection_threshold:0.7", "PYTORCH_CUDA_ALLOC_CONF": text}


def test_allocator_reads_the_installed_torch_release():
    # The default order is the installed torch's, read from its metadata without importing it.
    assert config._torch_release() == tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])


@pytest.mark.skipif(not hasattr(torch._C, "_accelerator_getAllocatorSettings"),
                    reason="this torch has no accelerator allocator settings to read")
def test_allocator_agrees_with_what_the_installed_torch_reads():
    # Run torch in a child process with both variables set, and compare the value it takes
    # with the one configure_allocator keeps in force.
    import os
    import subprocess
    import sys

    env = {"PYTORCH_ALLOC_CONF": "garbage_collection_threshold:0.7",
           "PYTORCH_CUDA_ALLOC_CONF": "garbage_collection_threshold:0.6"}
    child = dict(os.environ, **env)
    read = subprocess.run([sys.executable, "-c", "import torch; print(torch._C._accelerator_getAllocatorSettings())"],
                          env=child, capture_output=True, text=True, check=True).stdout
    kept = configure_allocator(max_split_size_mb=512, environ=dict(env))
    assert ("garbage_collection_threshold:0.6" in read) == kept.startswith("garbage_collection_threshold:0.6"), (read, kept)


def test_allocator_on_rocm_keeps_max_split(fake_rocm):
    # The allocator reads max_split_size_mb on ROCm builds (no ROCm branch in
    # c10's parser): it is kept, and written when asked for.
    env = {"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:512,garbage_collection_threshold:0.6",
           "PYTORCH_HIP_ALLOC_CONF": "max_split_size_mb:128,roundup_power2_divisions:4"}
    with pytest.warns(RuntimeWarning, match="zeroed data"):
        text = configure_allocator(max_split_size_mb=256, environ=env)
    # PYTORCH_HIP_ALLOC_CONF is ignored where PYTORCH_CUDA_ALLOC_CONF is set: its
    # roundup_power2_divisions was not in force and does not come into force.
    assert text == "max_split_size_mb:256,garbage_collection_threshold:0.6,expandable_segments:True"
    assert env["PYTORCH_CUDA_ALLOC_CONF"] == text and env["PYTORCH_HIP_ALLOC_CONF"] == text
    assert "PYTORCH_ALLOC_CONF" not in env


def test_allocator_on_rocm_defaults_say_what_they_wrote(fake_rocm):
    env: dict[str, str] = {}
    with pytest.warns(RuntimeWarning) as record:
        assert configure_allocator(environ=env) == "expandable_segments:True"
    assert env == {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}
    message = str(record[0].message)
    assert "'expandable_segments:True' to PYTORCH_CUDA_ALLOC_CONF" in message
    assert "legacy-rocm-build#6603" in message and "7.0" in message
    env = {"PYTORCH_ALLOC_CONF": "expandable_segments:True,pinned_use_host_register:True"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert configure_allocator(environ=env, expandable_segments=False) == \
            "expandable_segments:False,pinned_use_host_register:True"
    assert env["PYTORCH_CUDA_ALLOC_CONF"] == env["PYTORCH_ALLOC_CONF"]


def test_allocator_on_rocm_leaves_the_users_choice(fake_rocm):
    env = {"PYTORCH_HIP_ALLOC_CONF": "expandable_segments:False"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert configure_allocator(environ=env) == "expandable_segments:False"
    assert env == {"PYTORCH_HIP_ALLOC_CONF": "expandable_segments:False"}


def test_allocator_writes_process_environment(monkeypatch, fake_rocm):
    for name in config._ALLOC_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:64")
    with pytest.warns(RuntimeWarning):
        configure_allocator()
    import os

    assert os.environ["PYTORCH_CUDA_ALLOC_CONF"] == "max_split_size_mb:64,expandable_segments:True"


@pytest.mark.parametrize("rocm", [False, True], ids=["off ROCm", "ROCm"])
@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(max_split_size_mb=-1), ValueError, "greater than 20"),
    (dict(max_split_size_mb=20), ValueError, "greater than 20"),
    (dict(max_split_size_mb=0), ValueError, "greater than 20"),
    (dict(max_split_size_mb=512.0), TypeError, "must be an int"),
    (dict(max_split_size_mb="512"), TypeError, "must be an int"),
    (dict(max_split_size_mb=True), TypeError, "must be an int"),
    (dict(expandable_segments="True"), TypeError, "True, False or None"),
    (dict(expandable_segments=1), TypeError, "True, False or None"),
])
def test_allocator_rejects_bad_values_before_writing(monkeypatch, rocm, kwargs, exc, match):
    monkeypatch.setattr(config._device, "_IS_ROCM", rocm)
    env = {"PYTORCH_CUDA_ALLOC_CONF": "garbage_collection_threshold:0.6"}
    before = dict(env)
    with pytest.raises(exc, match=match):
        configure_allocator(environ=env, **kwargs)
    assert env == before


def test_allocator_accepts_the_smallest_valid_split():
    env: dict[str, str] = {}
    assert configure_allocator(max_split_size_mb=21, environ=env).endswith("max_split_size_mb:21")
