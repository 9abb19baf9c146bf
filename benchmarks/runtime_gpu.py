"""Verify rocmlint.runtime on a GPU: parity, tier agreement, argument checks,
overhead, memory, and a Hugging Face model.

Run on an NVIDIA GPU (H100/H200), with transformers installed for section 5:

    python benchmarks/runtime_gpu.py --rounds 101 --out results/

It checks, on the device:

1. parity: every op against the direct PyTorch call it replaces (bit-identical
   where the path is the same), including SDPA's ``is_causal``,
   ``flash_attn_func``, windows (against SDPA with the same mask) and dropout
   with the same seed;
2. tier 2 (SDPA) against tier 3 (chunked eager): rtol=atol=5e-2 in bf16,
   1e-4 in fp32, plus both against a float64 reference, windows included;
   then argument checks raised on the device, eager backward with masks
   against SDPA's gradients, which SDPA kernels take GQA with a mask, and rows
   that see no key;
3. per-call time of ``attention`` against the hand-written equivalent (SDPA
   plus the layout transposes), of ``layout="bhsd"`` against direct SDPA, and
   of reading the three input shapes before the direct call (the least the
   argument checks cost), at (B, S, H, Hkv, D) = (1,1,32,8,128),
   (8,1024,32,8,128), (2,4096,32,32,128), (1,8192,64,8,128), causal, bf16: CUDA
   events around batches of calls after warm-up, medians over interleaved
   rounds, paired differences with their interquartile range, the
   hand-written version timed twice to show the noise;
4. peak memory above the inputs for the same calls, the eager tier and a
   naive one-shot eager attention;
5. a Llama-3.1-8B-shaped model with random weights: ``attn_implementation``
   "rocm" against "sdpa" (logits, greedy tokens, prefill and decode
   throughput, "sdpa" timed twice for the noise), then ``fuse_model`` on a
   copy against the original.

Prints Markdown tables (the last lines of output) and writes
``runtime_gpu.md`` and ``runtime_gpu.json`` into ``--out``.
``--device cpu --quick`` runs the same code on small shapes without a GPU;
``--skip`` leaves sections out.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import rocmlint.runtime as rt  # noqa: E402

PERF_SHAPES = [  # (B, S, H, Hkv, D)
    (1, 1, 32, 8, 128),
    (8, 1024, 32, 8, 128),
    (2, 4096, 32, 32, 128),
    (1, 8192, 64, 8, 128),
]
QUICK_SHAPES = [(1, 1, 8, 2, 32), (2, 128, 8, 2, 32), (1, 256, 8, 8, 32), (1, 512, 8, 2, 32)]

MiB = 2**20


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def randn(shape, dtype, dev, gen):
    return torch.randn(shape, generator=gen, device=dev, dtype=torch.float32).to(dtype)


def make_qkv(b, sq, sk, h, hk, d, dtype, dev, seed=0):
    gen = torch.Generator(device=dev).manual_seed(seed)
    q = randn((b, sq, h, d), dtype, dev, gen)
    k = randn((b, sk, hk, d), dtype, dev, gen)
    v = randn((b, sk, hk, d), dtype, dev, gen)
    return q, k, v


def sdpa_masked(qb, kb, vb, mask):
    """SDPA with a mask on [B, H, S, D] inputs, GQA as transformers' SDPA path
    does it on CUDA (enable_gqa with a mask leaves the math kernel there): the
    query heads packed into rows for one query row, K/V repeated otherwise."""
    b, h, sq, d = qb.shape
    hk = kb.shape[1]
    if h == hk:
        return F.scaled_dot_product_attention(qb, kb, vb, attn_mask=mask)
    g = h // hk
    if sq == 1 and (mask.dim() < 3 or mask.shape[-3] == 1):
        out = F.scaled_dot_product_attention(qb.reshape(b, hk, g, d), kb, vb, attn_mask=mask)
        return out.reshape(b, h, 1, vb.shape[-1])
    kr, vr = (t[:, :, None].expand(b, hk, g, *t.shape[2:]).reshape(b, h, *t.shape[2:])
              for t in (kb, vb))
    return F.scaled_dot_product_attention(qb, kr, vr, attn_mask=mask)


def hand_bshd(q, k, v, causal):
    """What a hand-written port of flash_attn_func(q, k, v, causal=...) to SDPA
    calls: transposes to [B, H, S, D], GQA via enable_gqa (by regrouping where a
    mask is needed, see sdpa_masked), bottom-right causal."""
    qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    sq, sk = qt.shape[2], kt.shape[2]
    gqa = qt.shape[1] != kt.shape[1]
    if causal and sq == sk:
        out = F.scaled_dot_product_attention(qt, kt, vt, is_causal=True, enable_gqa=gqa)
    elif causal and sq > 1:
        mask = torch.ones(sq, sk, dtype=torch.bool, device=q.device).tril(sk - sq)
        if q.device.type == "cuda":
            out = sdpa_masked(qt, kt, vt, mask)
        else:
            out = F.scaled_dot_product_attention(qt, kt, vt, attn_mask=mask, enable_gqa=gqa)
    else:
        out = F.scaled_dot_product_attention(qt, kt, vt, enable_gqa=gqa)
    return out.transpose(1, 2)


def naive_transposing(q, k, v, causal):
    """A careless wrapper: contiguous copies in and out."""
    qt, kt, vt = (t.transpose(1, 2).contiguous() for t in (q, k, v))
    gqa = qt.shape[1] != kt.shape[1]
    out = F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal, enable_gqa=gqa)
    return out.transpose(1, 2).contiguous()


def naive_eager(q, k, v, causal):
    """One-shot eager attention with repeated K/V (what the eager tier avoids)."""
    qt, kt, vt = (t.transpose(1, 2) for t in (q, k, v))
    rep = qt.shape[1] // kt.shape[1]
    kt, vt = kt.repeat_interleave(rep, 1), vt.repeat_interleave(rep, 1)
    s = qt @ kt.transpose(-1, -2) * qt.shape[-1] ** -0.5
    if causal:
        sq, sk = s.shape[-2], s.shape[-1]
        s = s.masked_fill(~torch.ones(sq, sk, dtype=torch.bool, device=s.device).tril(sk - sq),
                          float("-inf"))
    p = torch.softmax(s, dim=-1, dtype=torch.float32).to(vt.dtype)
    return (p @ vt).transpose(1, 2)


def reference64(q, k, v, causal):
    qd, kd, vd = (t.double().transpose(1, 2) for t in (q, k, v))
    rep = qd.shape[1] // kd.shape[1]
    kd, vd = kd.repeat_interleave(rep, 1), vd.repeat_interleave(rep, 1)
    s = qd @ kd.transpose(-1, -2) * qd.shape[-1] ** -0.5
    sq, sk = s.shape[-2], s.shape[-1]
    if causal:
        s = s.masked_fill(~torch.ones(sq, sk, dtype=torch.bool, device=s.device).tril(sk - sq),
                          float("-inf"))
    return (torch.softmax(s, -1).nan_to_num(0.0) @ vd).transpose(1, 2)


def reference64_window(q, k, v, causal, window):
    """Float64 [B, S, H, D] attention with a bottom-right causal mask and a
    flash-attention (left, right) window."""
    qd, kd, vd = (t.double().transpose(1, 2) for t in (q, k, v))
    rep = qd.shape[1] // kd.shape[1]
    kd, vd = kd.repeat_interleave(rep, 1), vd.repeat_interleave(rep, 1)
    s = qd @ kd.transpose(-1, -2) * qd.shape[-1] ** -0.5
    sq, sk = s.shape[-2], s.shape[-1]
    i = torch.arange(sq, device=s.device).unsqueeze(1) + (sk - sq)
    j = torch.arange(sk, device=s.device).unsqueeze(0)
    allowed = torch.ones(sq, sk, dtype=torch.bool, device=s.device)
    if causal:
        allowed &= j <= i
    if window[0] >= 0:
        allowed &= j >= i - window[0]
    if window[1] >= 0:
        allowed &= j <= i + window[1]
    s = s.masked_fill(~allowed, float("-inf"))
    return (torch.softmax(s, -1).nan_to_num(0.0) @ vd).transpose(1, 2)


def describe_diff(a, b):
    if a.shape != b.shape:
        return f"shape {tuple(a.shape)} vs {tuple(b.shape)}"
    if torch.equal(a, b):
        return "bit-identical"
    return f"max|diff| {(a.float() - b.float()).abs().max().item():.3g}"


# ---------------------------------------------------------------------------
# 1. parity
# ---------------------------------------------------------------------------

def parity(dev, quick):
    rows = []
    d = 32 if quick else 128
    cases = [  # name, (b, sq, sk, h, hk), causal
        ("MHA square", (2, 64, 64, 8, 8), True),
        ("GQA square", (2, 64, 64, 16, 4), True),
        ("GQA non-causal", (2, 48, 48, 16, 4), False),
        ("MQA square", (1, 64, 64, 8, 1), True),
        ("decode q=1, kv=512", (4, 1, 512, 16, 4), True),
        ("chunked prefill q=64, kv=512", (1, 64, 512, 16, 4), True),
        ("cross q=16, kv=40", (2, 16, 40, 8, 2), False),
    ]
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        for name, (b, sq, sk, h, hk), causal in cases:
            q, k, v = make_qkv(b, sq, sk, h, hk, d, dtype, dev)
            got = rt.attention(q, k, v, causal=causal)
            rows.append(("attention bshd", f"{name}, causal={causal}", str(dtype)[6:],
                         describe_diff(got, hand_bshd(q, k, v, causal))))
            qb, kb, vb = (t.transpose(1, 2).contiguous() for t in (q, k, v))
            got = rt.attention(qb, kb, vb, causal=causal, layout="bhsd")
            ref = hand_bshd(q, k, v, causal).transpose(1, 2)
            rows.append(("attention bhsd", f"{name}, causal={causal}", str(dtype)[6:],
                         describe_diff(got, ref)))
    gen = torch.Generator(device=dev).manual_seed(1)
    m, kdim, n = (64, 256, 512) if quick else (512, 4096, 11008)
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        x = randn((2, m, kdim), dtype, dev, gen)
        w = randn((n, kdim), dtype, dev, gen) / math.sqrt(kdim)
        bias = randn((n,), dtype, dev, gen)
        dt = str(dtype)[6:]
        rows.append(("linear", "no bias", dt, describe_diff(rt.linear(x, w), F.linear(x, w))))
        rows.append(("linear", "bias", dt, describe_diff(rt.linear(x, w, bias),
                                                         F.linear(x, w, bias))))
        y = randn((2, m, 2 * n), dtype, dev, gen)
        rows.append(("silu_and_mul", "fused [.., 2d]", dt,
                     describe_diff(rt.silu_and_mul(y), F.silu(y[..., :n]) * y[..., n:])))
        rows.append(("gelu_tanh_and_mul", "fused [.., 2d]", dt,
                     describe_diff(rt.gelu_tanh_and_mul(y),
                                   F.gelu(y[..., :n], approximate="tanh") * y[..., n:])))
        gate = nn.Linear(kdim, n, bias=False).to(dev, dtype)
        up = nn.Linear(kdim, n, bias=False).to(dev, dtype)
        fused = rt.fuse_gate_up(gate, up)
        with torch.no_grad():
            g, u = fused(x)
            rows.append(("fuse_gate_up", "gate vs nn.Linear", dt, describe_diff(g, gate(x))))
            rows.append(("fuse_gate_up", "up vs nn.Linear", dt, describe_diff(u, up(x))))
            act = rt.fuse_gate_up(gate, up, activation="silu")
            rows.append(("fuse_gate_up(silu)", "vs silu(gate(x))*up(x)", dt,
                         describe_diff(act(x), F.silu(gate(x)) * up(x))))
        qp = nn.Linear(kdim, kdim, bias=True).to(dev, dtype)
        kp = nn.Linear(kdim, kdim // 4, bias=True).to(dev, dtype)
        vp = nn.Linear(kdim, kdim // 4, bias=True).to(dev, dtype)
        fq = rt.fuse_qkv(qp, kp, vp)
        with torch.no_grad():
            outs = fq(x)
            worst = [describe_diff(o, p(x)) for o, p in zip(outs, (qp, kp, vp))]
        rows.append(("fuse_qkv (GQA 4:1)", "q / k / v vs nn.Linear", dt, " / ".join(worst)))
    # the SDPA / flash_attn_func names, windows, dropout
    for dtype in (torch.bfloat16, torch.float32):
        dt = str(dtype)[6:]
        for name, (b_, sq, sk, h, hk) in (("q=16, kv=40", (2, 16, 40, 16, 4)),
                                          ("decode q=1, kv=512", (4, 1, 512, 16, 4)),
                                          ("square 64", (2, 64, 64, 16, 4))):
            q, k, v = make_qkv(b_, sq, sk, h, hk, d, dtype, dev, seed=11)
            qb, kb, vb = (t.transpose(1, 2).contiguous() for t in (q, k, v))
            got = rt.attention(qb, kb, vb, is_causal=True, layout="bhsd")
            ref = F.scaled_dot_product_attention(qb, kb, vb, is_causal=True, enable_gqa=True)
            rows.append(("attention is_causal (SDPA's top-left)", name, dt,
                         describe_diff(got, ref)))
            got = rt.flash_attn_func(q, k, v, causal=True)
            rows.append(("flash_attn_func(causal=True)", f"{name} vs hand-written", dt,
                         describe_diff(got, hand_bshd(q, k, v, True))))
            left = max(1, sk // 4)
            i = torch.arange(sq, device=dev).unsqueeze(1)
            j = torch.arange(sk, device=dev).unsqueeze(0)
            mask = (j <= i + sk - sq) & (j >= i + sk - sq - left)
            got = rt.attention(qb, kb, vb, causal=True, window_size=(left, 0), layout="bhsd")
            if dev.type == "cuda":
                ref = sdpa_masked(qb, kb, vb, mask)
                rows.append((f"attention window ({left}, 0), causal",
                             f"{name} vs SDPA + mask, GQA regrouped", dt, describe_diff(got, ref)))
                other = F.scaled_dot_product_attention(qb, kb, vb, attn_mask=mask,
                                                       enable_gqa=True)
                rows.append(("(for reference) SDPA + mask with enable_gqa", name, dt,
                             describe_diff(got, other)))
            else:
                ref = F.scaled_dot_product_attention(qb, kb, vb, attn_mask=mask, enable_gqa=True)
                rows.append((f"attention window ({left}, 0), causal", f"{name} vs SDPA + mask",
                             dt, describe_diff(got, ref)))
            torch.manual_seed(5)
            got = rt.attention(qb, kb, vb, dropout_p=0.1, is_causal=True, layout="bhsd")
            torch.manual_seed(5)
            ref = F.scaled_dot_product_attention(qb, kb, vb, dropout_p=0.1, is_causal=True,
                                                 enable_gqa=True)
            rows.append(("attention dropout_p=0.1 (same seed)", name, dt, describe_diff(got, ref)))
        x = randn((2, m, kdim), dtype, dev, gen)
        w = randn((n, kdim), dtype, dev, gen) / math.sqrt(kdim)
        bias = randn((n,), dtype, dev, gen)
        rows.append(("linear(bias=...)", "keyword", dt,
                     describe_diff(rt.linear(x, weight=w, bias=bias), F.linear(x, w, bias=bias))))
    # configuration guards do what the original lines did
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
             torch.backends.cudnn.benchmark)
    rt.set_tf32(True)
    ok_tf32 = torch.backends.cuda.matmul.allow_tf32 and torch.backends.cudnn.allow_tf32
    rt.set_cudnn_benchmark(True)
    ok_bench = torch.backends.cudnn.benchmark is True
    (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
     torch.backends.cudnn.benchmark) = saved
    modes = ["default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"]
    rows.append(("compile_mode", ", ".join(modes), "-",
                 "unchanged" if all(rt.compile_mode(m) == m for m in modes) else "CHANGED"))
    rows.append(("set_tf32 / set_cudnn_benchmark", "flags set", "-",
                 "set" if ok_tf32 and ok_bench else "NOT SET"))
    rows.append(("apply_inductor_rocm_defaults", "returns", "-",
                 repr(rt.apply_inductor_rocm_defaults())))
    env = {"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:512"}
    rows.append(("configure_allocator", "no arguments, max_split_size_mb:512 set", "-",
                 "unchanged" if rt.configure_allocator(environ=env) == "max_split_size_mb:512"
                 and env == {"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:512"} else "CHANGED"))
    return rows


# ---------------------------------------------------------------------------
# 2. tier agreement
# ---------------------------------------------------------------------------

def agreement(dev, quick):
    rows = []
    d = 32 if quick else 128
    cases = [  # (b, sq, sk, h, hk), causal
        ((2, 256, 256, 16, 4), True),
        ((2, 256, 256, 16, 4), False),
        ((2, 200, 200, 8, 8), True),
        ((4, 1, 1024, 32, 8), True),
        ((1, 128, 1024, 32, 8), True),
        ((1, 300, 100, 8, 2), True),
    ]
    if not quick:
        cases.append(((1, 2048, 2048, 32, 8), True))
    for dtype, tol in ((torch.bfloat16, 5e-2), (torch.float32, 1e-4)):
        for (b, sq, sk, h, hk), causal in cases:
            q, k, v = make_qkv(b, sq, sk, h, hk, d, dtype, dev, seed=3)
            t2 = rt.attention(q, k, v, causal=causal, backend="sdpa")
            t3 = rt.attention(q, k, v, causal=causal, backend="eager")
            ref = reference64(q, k, v, causal)
            ok = torch.allclose(t2.float(), t3.float(), rtol=tol, atol=tol)
            rows.append((f"({b},{sq},{sk},{h},{hk},{d})", causal, str(dtype)[6:], tol,
                         (t2.float() - t3.float()).abs().max().item(),
                         (t2.double() - ref).abs().max().item(),
                         (t3.double() - ref).abs().max().item(), "pass" if ok else "FAIL"))
        for (b, sq, sk, h, hk), window in (((2, 256, 256, 16, 4), (64, 0)),
                                           ((1, 128, 1024, 32, 8), (100, 0)),
                                           ((2, 200, 200, 8, 8), (16, 16))):
            q, k, v = make_qkv(b, sq, sk, h, hk, d, dtype, dev, seed=4)
            t2 = rt.attention(q, k, v, causal=window[1] == 0, window_size=window, backend="sdpa")
            t3 = rt.attention(q, k, v, causal=window[1] == 0, window_size=window,
                              backend="eager")
            ref = reference64_window(q, k, v, window[1] == 0, window)
            ok = torch.allclose(t2.float(), t3.float(), rtol=tol, atol=tol)
            rows.append((f"({b},{sq},{sk},{h},{hk},{d}) window {window}", window[1] == 0,
                         str(dtype)[6:], tol, (t2.float() - t3.float()).abs().max().item(),
                         (t2.double() - ref).abs().max().item(),
                         (t3.double() - ref).abs().max().item(), "pass" if ok else "FAIL"))
    return rows


# ---------------------------------------------------------------------------
# 2b. argument checks and eager backward on the device
# ---------------------------------------------------------------------------

def expect_error(fn, exc, text):
    try:
        fn()
    except exc as err:
        ok = text in str(err)
        return f"{type(err).__name__}: {str(err)[:90]}", "pass" if ok else "FAIL"
    except Exception as err:  # noqa: BLE001 - reported, not raised
        return f"wrong error {type(err).__name__}: {str(err)[:80]}", "FAIL"
    return "no error", "FAIL"


def checks(dev, quick):
    rows = []
    d = 32 if quick else 128
    q, k, v = make_qkv(2, 8, 8, 8, 2, d, torch.bfloat16, dev, seed=12)
    cpu_gen = torch.Generator().manual_seed(0)
    cases = [
        ("q 3-D [S, H, D]", lambda: rt.attention(q[0], k[0], v[0]), ValueError, "4-D"),
        ("v float32", lambda: rt.attention(q, k, v.float()), TypeError, "v has dtype"),
        ("v longer than k", lambda: rt.attention(q, k, torch.cat([v, v], 1)), ValueError,
         "v has 16 positions"),
        ("k batch 1 against q batch 2", lambda: rt.attention(q, k[:1], v[:1]), ValueError,
         "batch size 1"),
        ("integer 0/1 mask", lambda: rt.attention(q, k, v, attn_mask=torch.ones(
            8, 8, dtype=torch.long, device=dev)), TypeError, "integer mask"),
    ]
    if dev.type == "cuda":
        cases += [
            ("k on the CPU", lambda: rt.attention(q, k.cpu(), v), ValueError, "k is on cpu"),
            ("CPU generator for GPU dropout", lambda: rt.attention(
                q, k, v, dropout_p=0.1, generator=cpu_gen), ValueError, "generator is on cpu"),
        ]
    for name, fn, exc, text in cases:
        result, verdict = expect_error(fn, exc, text)
        rows.append((name, result, verdict))
    # eager backward with masks agrees with SDPA's backward
    for dtype, tol in ((torch.float32, 1e-4), (torch.bfloat16, 5e-2)):
        q, k, v = make_qkv(2, 64, 96, 8, 2, d, dtype, dev, seed=13)
        keep = torch.rand(2, 1, 64, 96, device=dev, generator=torch.Generator(
            device=dev).manual_seed(1)) > 0.3
        keep[..., -1] = True
        for label, mask in (("bool mask", keep),
                            ("additive mask", torch.zeros(keep.shape, device=dev, dtype=dtype)
                             .masked_fill(~keep, float("-inf")))):
            grads = {}
            for backend in ("sdpa", "eager"):
                a, b_, c = (t.detach().clone().requires_grad_() for t in (q, k, v))
                out = rt.attention(a, b_, c, attn_mask=mask, causal=True, backend=backend)
                out.float().square().sum().backward()
                grads[backend] = (out.detach(), a.grad, b_.grad, c.grad)
            worst = max((x.float() - y.float()).abs().max().item() /
                        max(1.0, y.float().abs().max().item())
                        for x, y in zip(grads["eager"], grads["sdpa"]))
            finite = all(torch.isfinite(t.float()).all().item() for t in grads["eager"])
            rows.append((f"eager backward, {label} + causal, {str(dtype)[6:]}",
                         f"largest relative difference to SDPA's gradients {worst:.3g}",
                         "pass" if finite and worst < tol else "FAIL"))
    # which SDPA kernels take enable_gqa together with a mask on this device
    if dev.type == "cuda":
        from torch.nn.attention import SDPBackend, sdpa_kernel

        qb, kb, vb = (t.transpose(1, 2).contiguous()
                      for t in make_qkv(2, 64, 64, 16, 4, d, torch.bfloat16, dev, seed=15))
        mask = torch.ones(64, 64, dtype=torch.bool, device=dev).tril()
        able = []
        for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
                        SDPBackend.CUDNN_ATTENTION, SDPBackend.MATH):
            try:
                with sdpa_kernel([backend]):
                    F.scaled_dot_product_attention(qb, kb, vb, attn_mask=mask, enable_gqa=True)
                able.append(backend.name)
            except RuntimeError:
                pass
        rows.append(("SDPA kernels that run enable_gqa with a mask", ", ".join(able) or "none",
                     "info"))
        got = rt.attention(qb, kb, vb, attn_mask=mask, layout="bhsd")
        rep = [t[:, :, None].expand(2, 4, 4, 64, d).reshape(2, 16, 64, d) for t in (kb, vb)]
        ref = F.scaled_dot_product_attention(qb, rep[0], rep[1], attn_mask=mask)
        rows.append(("masked GQA prefill vs SDPA on repeated K/V", describe_diff(got, ref),
                     "pass" if torch.equal(got, ref) else "FAIL"))
        q1 = qb[:, :, -1:]
        got = rt.attention(q1, kb, vb, attn_mask=mask[-1:], layout="bhsd")
        ref = F.scaled_dot_product_attention(q1.reshape(2, 4, 4, d), kb, vb,
                                             attn_mask=mask[-1:]).reshape(2, 16, 1, d)
        rows.append(("masked GQA decode vs SDPA on packed query heads", describe_diff(got, ref),
                     "pass" if torch.equal(got, ref) else "FAIL"))
    # rows that see no key: zeros in SDPA on this device too
    q, k, v = make_qkv(1, 4, 6, 4, 4, d, torch.bfloat16, dev, seed=14)
    mask = torch.ones(4, 6, dtype=torch.bool, device=dev)
    mask[2] = False
    for backend in ("sdpa", "eager"):
        out = rt.attention(q, k, v, attn_mask=mask, backend=backend)
        ok = torch.equal(out[:, 2], torch.zeros_like(out[:, 2]))
        rows.append((f"fully masked row, {backend} tier", "zeros" if ok else "not zeros",
                     "pass" if ok else "note"))
    return rows


# ---------------------------------------------------------------------------
# 3. time per call
# ---------------------------------------------------------------------------

class Timer:
    def __init__(self, dev):
        self.dev = dev

    def batch(self, fn, n):
        if self.dev.type == "cuda":
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(n):
                fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) * 1000.0 / n  # microseconds
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        return (time.perf_counter() - t0) * 1e6 / n


def time_variants(fns, dev, inner, rounds, warmup=10):
    timer = Timer(dev)
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    sync(dev)
    names = list(fns)
    samples = {name: [] for name in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            samples[name].append(timer.batch(fns[name], inner))
    return {name: statistics.median(vals) for name, vals in samples.items()}, samples


def perf(dev, shapes, dtype, rounds):
    rows = []
    for (b, s, h, hk, d) in shapes:
        q, k, v = make_qkv(b, s, s, h, hk, d, dtype, dev, seed=5)
        qb, kb, vb = (t.transpose(1, 2).contiguous() for t in (q, k, v))
        gqa = h != hk
        causal = True
        sdpa = F.scaled_dot_product_attention

        def shape_reads_then_sdpa():
            # The least the argument checks must do: read the three shapes.
            qb.shape, kb.shape, vb.shape  # noqa: B018
            return sdpa(qb, kb, vb, is_causal=causal, enable_gqa=gqa)

        fns = {
            "direct SDPA [B,H,S,D]": lambda: sdpa(qb, kb, vb, is_causal=causal, enable_gqa=gqa),
            "attention layout=bhsd": lambda: rt.attention(qb, kb, vb, causal=causal,
                                                          layout="bhsd"),
            "3 shape reads + SDPA": shape_reads_then_sdpa,
            # The minimal hand-written call for these square causal shapes: no
            # shape checks at all (hand_bshd's q_len != k_len handling is left out).
            "hand-written [B,S,H,D]": lambda: sdpa(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=causal,
                enable_gqa=gqa).transpose(1, 2),
            "hand-written again": lambda: sdpa(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=causal,
                enable_gqa=gqa).transpose(1, 2),
            "attention [B,S,H,D]": lambda: rt.attention(q, k, v, causal=causal),
            "naive transposing wrapper": lambda: naive_transposing(q, k, v, causal),
        }
        with torch.no_grad():
            # One call's duration decides how many calls go in one timed batch.
            for fn in fns.values():
                fn()
            sync(dev)
            probe = Timer(dev).batch(fns["hand-written [B,S,H,D]"], 5)
            inner = max(3, min(400, int(5000 / max(probe, 1.0))))
            med, samples = time_variants(fns, dev, inner, rounds)
        hand = med["hand-written [B,S,H,D]"]
        direct = med["direct SDPA [B,H,S,D]"]

        def paired(a, b):
            """Median and quartiles over rounds of (a - b), each pair timed
            back to back in the same round: robust to clock drift between rounds."""
            diffs = [x - y for x, y in zip(samples[a], samples[b])]
            q1, mid, q3 = statistics.quantiles(diffs, n=4)
            return statistics.median(diffs), q1, q3

        bshd = paired("attention [B,S,H,D]", "hand-written [B,S,H,D]")
        bhsd = paired("attention layout=bhsd", "direct SDPA [B,H,S,D]")
        floor = paired("3 shape reads + SDPA", "direct SDPA [B,H,S,D]")
        noise = paired("hand-written again", "hand-written [B,S,H,D]")
        rows.append({
            "shape": (b, s, h, hk, d),
            "calls_per_batch": inner,
            "rounds": rounds,
            "median_us": med,
            "overhead_bshd_us": bshd[0],
            "overhead_bshd_pct": 100.0 * bshd[0] / hand,
            "overhead_bshd_iqr_us": (bshd[1], bshd[2]),
            "overhead_bhsd_us": bhsd[0],
            "overhead_bhsd_pct": 100.0 * bhsd[0] / direct,
            "overhead_bhsd_iqr_us": (bhsd[1], bhsd[2]),
            "shape_reads_us": floor[0],
            "shape_reads_iqr_us": (floor[1], floor[2]),
            "noise_us": noise[0],
            "noise_pct": 100.0 * noise[0] / hand,
            "noise_iqr_us": (noise[1], noise[2]),
            "spread_pct": {n: 100.0 * (statistics.quantiles(v, n=4)[2] -
                                       statistics.quantiles(v, n=4)[0]) / statistics.median(v)
                           for n, v in samples.items()},
            "samples_us": samples,
        })
        q = k = v = qb = kb = vb = fns = None  # free before the next shape
        if dev.type == "cuda":
            torch.cuda.empty_cache()
    return rows


def eager_time(dev, shapes, dtype):
    rows = []
    for (b, s, h, hk, d) in shapes:
        q, k, v = make_qkv(b, s, s, h, hk, d, dtype, dev, seed=7)
        with torch.no_grad():
            fns = {"sdpa": lambda: rt.attention(q, k, v, causal=True, backend="sdpa"),
                   "eager": lambda: rt.attention(q, k, v, causal=True, backend="eager")}
            med, _ = time_variants(fns, dev, inner=2, rounds=3, warmup=2)
        rows.append({"shape": (b, s, h, hk, d), "sdpa_us": med["sdpa"], "eager_us": med["eager"],
                     "ratio": med["eager"] / med["sdpa"]})
        q = k = v = fns = None
    return rows


# ---------------------------------------------------------------------------
# 4. memory
# ---------------------------------------------------------------------------

def peak_extra(fn, dev):
    """Peak bytes allocated above what was allocated before the call."""
    sync(dev)
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats(dev)
    base = torch.cuda.memory_allocated(dev)
    out = fn()
    sync(dev)
    peak = torch.cuda.max_memory_allocated(dev) - base
    out_bytes = out.numel() * out.element_size()
    del out
    return peak, out_bytes


def memory(dev, shapes, dtype):
    rows = []
    for (b, s, h, hk, d) in shapes:
        q, k, v = make_qkv(b, s, s, h, hk, d, dtype, dev, seed=9)
        qb, kb, vb = (t.transpose(1, 2).contiguous() for t in (q, k, v))
        gqa = h != hk
        fns = {
            "direct SDPA [B,H,S,D]": lambda: F.scaled_dot_product_attention(
                qb, kb, vb, is_causal=True, enable_gqa=gqa),
            "hand-written [B,S,H,D]": lambda: hand_bshd(q, k, v, True),
            "attention [B,S,H,D]": lambda: rt.attention(q, k, v, causal=True),
            "attention layout=bhsd": lambda: rt.attention(qb, kb, vb, causal=True, layout="bhsd"),
            "attention eager tier": lambda: rt.attention(q, k, v, causal=True, backend="eager"),
            "naive one-shot eager": lambda: naive_eager(q, k, v, True),
        }
        row = {"shape": (b, s, h, hk, d)}
        with torch.no_grad():
            for name, fn in fns.items():
                try:
                    peak, out_bytes = peak_extra(fn, dev)
                    row[name] = peak
                    row["output_bytes"] = out_bytes
                except torch.cuda.OutOfMemoryError:
                    row[name] = None
                    torch.cuda.empty_cache()
        rows.append(row)
        q = k = v = qb = kb = vb = fns = None  # free before the next shape
        torch.cuda.empty_cache()
    return rows


# ---------------------------------------------------------------------------
# 5. a Hugging Face model: registration, throughput, fusion
# ---------------------------------------------------------------------------

# Llama 3.1 8B's shape (hidden 4096, 32 layers, 32 heads / 8 KV heads, MLP
# 14336, vocab 128256), randomly initialised: real-size GEMMs and attention.
HF_CONFIG = dict(vocab_size=128256, hidden_size=4096, intermediate_size=14336,
                 num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8,
                 max_position_embeddings=8192, rope_theta=500000.0)
HF_QUICK = dict(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512)


def build_hf_model(dev, quick):
    import transformers

    config = transformers.LlamaConfig(**(HF_QUICK if quick else HF_CONFIG))
    dtype = torch.bfloat16 if dev.type == "cuda" else torch.float32
    torch.manual_seed(0)
    with torch.device(dev):
        try:
            model = transformers.AutoModelForCausalLM.from_config(
                config, dtype=dtype, attn_implementation="sdpa")
        except TypeError:  # transformers 4.x names it torch_dtype
            model = transformers.AutoModelForCausalLM.from_config(
                config, torch_dtype=dtype, attn_implementation="sdpa")
    return model.eval(), config


def set_attention(model, name):
    if hasattr(model, "set_attn_implementation"):
        model.set_attn_implementation(name)
    else:
        model.config._attn_implementation = name


def wall(fn, dev):
    sync(dev)
    t0 = time.perf_counter()
    fn()
    sync(dev)
    return time.perf_counter() - t0


def workloads(model, config, dev, quick):
    """(name, tokens, fn) for a prefill forward and a greedy generation."""
    gen = torch.Generator(device=dev).manual_seed(3)
    prompt = 64 if quick else 2048
    ids = torch.randint(0, config.vocab_size, (1, prompt), device=dev, generator=gen)
    new = 8 if quick else 64
    short = ids[:, : (16 if quick else 512)]
    batch = short.expand(2 if quick else 8, -1).contiguous()

    def prefill():
        model(ids)

    def decode(batch_ids):
        def run():
            model.generate(batch_ids, attention_mask=torch.ones_like(batch_ids),
                           max_new_tokens=new, min_new_tokens=new, do_sample=False,
                           pad_token_id=0)
        return run

    return [
        (f"prefill 1 x {prompt}", prompt, prefill),
        (f"greedy decode 1 x {new} after {short.shape[1]}", new, decode(short)),
        (f"greedy decode {batch.shape[0]} x {new} after {short.shape[1]}",
         new * batch.shape[0], decode(batch)),
    ]


def interleaved(variants, dev, rounds):
    """Median seconds per variant over rounds run in rotating order."""
    names = list(variants)
    samples = {n: [] for n in names}
    for name in names:
        variants[name]()  # warm-up
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            samples[name].append(wall(variants[name], dev))
    return {n: statistics.median(v) for n, v in samples.items()}, samples


def hf_section(dev, quick, rounds):
    import transformers

    import rocmlint.runtime.transformers as rocm_hf

    rocm_hf.register("rocm")
    model, config = build_hf_model(dev, quick)
    lines = [f"transformers {transformers.__version__}; Llama-3.1-8B-shaped config "
             f"({config.num_hidden_layers} layers, hidden {config.hidden_size}, "
             f"{config.num_attention_heads}/{config.num_key_value_heads} heads), random "
             f"weights, {next(model.parameters()).dtype}; wall time per workload, medians over "
             f"{rounds} interleaved rounds; 'sdpa again' shows the noise.", ""]
    gen = torch.Generator(device=dev).manual_seed(4)
    ids = torch.randint(0, config.vocab_size, (2, 48), device=dev, generator=gen)
    with torch.no_grad():
        set_attention(model, "sdpa")
        ref = model(ids).logits
        ref_tokens = model.generate(ids[:1], max_new_tokens=16, do_sample=False, pad_token_id=0)
        set_attention(model, "rocm")
        got = model(ids).logits
        got_tokens = model.generate(ids[:1], max_new_tokens=16, do_sample=False, pad_token_id=0)
    padded = torch.ones_like(ids)
    padded[1, :10] = 0  # left padding: the model passes a mask
    with torch.no_grad():
        set_attention(model, "sdpa")
        ref_pad = model(ids, attention_mask=padded).logits
        ref_pad_tokens = model.generate(ids, attention_mask=padded, max_new_tokens=16,
                                        do_sample=False, pad_token_id=0)
        set_attention(model, "rocm")
        got_pad = model(ids, attention_mask=padded).logits
        got_pad_tokens = model.generate(ids, attention_mask=padded, max_new_tokens=16,
                                        do_sample=False, pad_token_id=0)
    lines.append(f"- logits 'rocm' vs 'sdpa' (2 x 48 tokens): {describe_diff(got, ref)}; "
                 f"greedy tokens (16 new): "
                 f"{'identical' if torch.equal(got_tokens, ref_tokens) else 'DIFFERENT'}")
    lines.append(f"- with left padding (a mask): logits {describe_diff(got_pad, ref_pad)}; "
                 f"greedy tokens, batch 2 (16 new): "
                 f"{'identical' if torch.equal(got_pad_tokens, ref_pad_tokens) else 'DIFFERENT'}")
    lines.append("")
    lines.append("| workload | sdpa | rocm | sdpa again | rocm vs sdpa | noise |")
    lines.append("|---|---|---|---|---|---|")
    results = []
    with torch.no_grad():
        for name, tokens, fn in workloads(model, config, dev, quick):
            def with_attention(impl):
                def run():
                    set_attention(model, impl)
                    fn()
                return run

            med, _ = interleaved({"sdpa": with_attention("sdpa"), "rocm": with_attention("rocm"),
                                  "sdpa again": with_attention("sdpa")}, dev, rounds)
            rel = 100.0 * (med["rocm"] - med["sdpa"]) / med["sdpa"]
            noise = 100.0 * (med["sdpa again"] - med["sdpa"]) / med["sdpa"]
            lines.append(f"| {name} | {tokens / med['sdpa']:.0f} tok/s | "
                         f"{tokens / med['rocm']:.0f} tok/s | "
                         f"{tokens / med['sdpa again']:.0f} tok/s | {rel:+.2f}% time | "
                         f"{noise:+.2f}% |")
            results.append({"workload": name, "seconds": med, "rocm_pct": rel, "noise_pct": noise})
    set_attention(model, "sdpa")
    return model, config, lines, results


def fuse_section(model, config, dev, quick, rounds):
    """fuse_model on a copy of the model; the original and the copy are timed
    in interleaved rounds."""
    import copy

    fused = copy.deepcopy(model)
    report = rt.fuse_model(fused, force=True)  # off ROCm only when asked
    if dev.type == "cuda":
        torch.cuda.empty_cache()
    gen = torch.Generator(device=dev).manual_seed(5)
    ids = torch.randint(0, config.vocab_size, (2, 48), device=dev, generator=gen)
    with torch.no_grad():
        before_logits = model(ids).logits
        after_logits = fused(ids).logits
        before_tokens = model.generate(ids[:1], max_new_tokens=16, do_sample=False,
                                       pad_token_id=0)
        after_tokens = fused.generate(ids[:1], max_new_tokens=16, do_sample=False,
                                      pad_token_id=0)
    scale = before_logits.float().abs().max().item()
    diff = (after_logits.float() - before_logits.float()).abs().max().item()
    lines = [f"fuse_model: {report['mlp']} MLPs and {report['qkv']} q/k/v groups fused, "
             f"skipped {report['skipped'] or 'none'}; logits max |diff| {diff:.3g} "
             f"(max |logit| {scale:.3g}; random weights, {next(model.parameters()).dtype}); "
             f"greedy tokens (16 new): "
             f"{'identical' if torch.equal(after_tokens, before_tokens) else 'different'}.",
             "", "| workload | unfused | fused | unfused again | fused vs unfused | noise |",
             "|---|---|---|---|---|---|"]
    results = []
    with torch.no_grad():
        for (name, tokens, plain), (_, _, fast) in zip(workloads(model, config, dev, quick),
                                                       workloads(fused, config, dev, quick)):
            med, _ = interleaved({"unfused": plain, "fused": fast, "unfused again": plain},
                                 dev, rounds)
            u, f, u2 = med["unfused"], med["fused"], med["unfused again"]
            lines.append(f"| {name} | {tokens / u:.0f} tok/s | {tokens / f:.0f} tok/s | "
                         f"{tokens / u2:.0f} tok/s | {100.0 * (f - u) / u:+.2f}% time | "
                         f"{100.0 * (u2 - u) / u:+.2f}% |")
            results.append({"workload": name, "seconds": med})
    fused = None
    return lines, results, {"report": report, "logit_diff": diff}


# ---------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------

def environment(dev):
    env = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "device": str(dev),
        "rocmlint_device_info": rt.device_info(),
    }
    if dev.type == "cuda":
        props = torch.cuda.get_device_properties(dev)
        env["device_name"] = props.name
        env["sm_count"] = props.multi_processor_count
        env["memory_gib"] = round(props.total_memory / 2**30, 1)
        try:
            env["cudnn"] = torch.backends.cudnn.version()
        except Exception:
            env["cudnn"] = None
    return env


def fmt_shape(shape):
    return "(" + ",".join(str(x) for x in shape) + ")"


def render_extra(check_rows, hf_rows, fuse_rows):
    out = []
    if check_rows:
        out.append("#### Argument checks and eager backward on the device")
        out.append("")
        out.append("| case | result | verdict |")
        out.append("|---|---|---|")
        for row in check_rows:
            out.append("| " + " | ".join(str(x).replace("|", "/") for x in row) + " |")
        out.append("")
    for title, rows in (("Hugging Face model: attn_implementation 'rocm' vs 'sdpa'", hf_rows),
                        ("fuse_model on the same model (attention 'sdpa')", fuse_rows)):
        if not rows:
            continue
        out.append(f"#### {title}")
        out.append("")
        for line in rows:
            out.append(line)
        out.append("")
    return "\n".join(out)


def render(env, parity_rows, agree_rows, perf_rows, eager_rows, mem_rows):
    out = []
    out.append(f"Device: {env.get('device_name', env['device'])}; torch {env['torch']} "
               f"(CUDA {env['cuda']}, cuDNN {env.get('cudnn')}); Python {env['python']}")
    out.append("")
    out.append("#### Parity with the direct PyTorch call")
    out.append("")
    out.append("| op | case | dtype | result |")
    out.append("|---|---|---|---|")
    for row in parity_rows:
        out.append("| " + " | ".join(str(x) for x in row) + " |")
    out.append("")
    out.append("#### Tier 2 (SDPA) vs tier 3 (chunked eager)")
    out.append("")
    out.append("| (B,Sq,Sk,H,Hkv,D) | causal | dtype | rtol=atol | max abs t2-t3 "
               "| t2 vs fp64 | t3 vs fp64 | result |")
    out.append("|---|---|---|---|---|---|---|---|")
    for r in agree_rows:
        out.append(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:g} | {r[4]:.3g} | {r[5]:.3g} | "
                   f"{r[6]:.3g} | {r[7]} |")
    out.append("")
    out.append("#### Time per call (bf16, causal; µs, medians over interleaved rounds; "
               "overheads are medians of per-round paired differences)")
    out.append("")
    names = list(perf_rows[0]["median_us"]) if perf_rows else []
    out.append("| (B,S,H,Hkv,D) | " + " | ".join(names) +
               " | overhead [B,S,H,D] | overhead bhsd (IQR) | 3 shape reads alone "
               "| noise (same call twice, IQR) |")
    out.append("|---|" + "---|" * (len(names) + 4))
    for r in perf_rows:
        cells = [f"{r['median_us'][n]:.1f}" for n in names]
        lo, hi = r["overhead_bhsd_iqr_us"]
        nlo, nhi = r["noise_iqr_us"]
        out.append(f"| {fmt_shape(r['shape'])} | " + " | ".join(cells) +
                   f" | {r['overhead_bshd_us']:+.2f} µs ({r['overhead_bshd_pct']:+.2f}%)"
                   f" | {r['overhead_bhsd_us']:+.2f} µs ({r['overhead_bhsd_pct']:+.2f}%; "
                   f"{lo:+.2f}..{hi:+.2f})"
                   f" | {r['shape_reads_us']:+.2f} µs"
                   f" | {r['noise_us']:+.2f} µs ({nlo:+.2f}..{nhi:+.2f}) |")
    if perf_rows:
        r0 = perf_rows[0]
        out.append("")
        out.append(f"Rounds: {r0['rounds']}; calls per timed batch: "
                   + ", ".join(f"{fmt_shape(r['shape'])} {r['calls_per_batch']}"
                               for r in perf_rows) + ".")
    out.append("")
    if eager_rows:
        out.append("#### Eager tier vs SDPA (bf16, causal)")
        out.append("")
        out.append("| (B,S,H,Hkv,D) | SDPA µs | eager tier µs | eager / SDPA |")
        out.append("|---|---|---|---|")
        for r in eager_rows:
            out.append(f"| {fmt_shape(r['shape'])} | {r['sdpa_us']:.1f} | {r['eager_us']:.1f} | "
                       f"{r['ratio']:.1f}x |")
        out.append("")
    if mem_rows:
        out.append("#### Peak memory above the inputs (bf16, causal; MiB)")
        out.append("")
        keys = [k for k in mem_rows[0] if k not in ("shape", "output_bytes")]
        out.append("| (B,S,H,Hkv,D) | output | " + " | ".join(keys) + " |")
        out.append("|---|---|" + "---|" * len(keys))
        for r in mem_rows:
            cells = ["OOM" if r[k] is None else f"{r[k] / MiB:.0f}" for k in keys]
            out.append(f"| {fmt_shape(r['shape'])} | {r['output_bytes'] / MiB:.0f} | "
                       + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def targets(perf_rows, mem_rows):
    lines = []
    for r in perf_rows:
        b, s, h, hk, d = r["shape"]
        if s >= 1024:
            ok = r["overhead_bshd_pct"] < 1.0
            lines.append(f"overhead at {fmt_shape(r['shape'])}: {r['overhead_bshd_pct']:+.2f}% "
                         f"(target < 1%): {'met' if ok else 'MISSED'}")
        if s == 1:
            ok = r["overhead_bshd_us"] < 3.0
            lines.append(f"overhead at decode {fmt_shape(r['shape'])}: "
                         f"{r['overhead_bshd_us']:+.2f} us (target < 3 us): "
                         f"{'met' if ok else 'MISSED'}")
        verdict = ""
        if s == 1:
            verdict = f" (target < 0.5 us): {'met' if r['overhead_bhsd_us'] < 0.5 else 'MISSED'}"
        lines.append(f"layout=bhsd vs direct SDPA at {fmt_shape(r['shape'])}: "
                     f"{r['overhead_bhsd_us']:+.2f} us ({r['overhead_bhsd_pct']:+.2f}%), "
                     f"noise {r['noise_us']:+.2f} us, three shape reads alone "
                     f"{r['shape_reads_us']:+.2f} us{verdict}")
    for r in mem_rows:
        b, s, h, hk, d = r["shape"]
        if h != hk:
            ours, direct = r["attention [B,S,H,D]"], r["direct SDPA [B,H,S,D]"]
            lines.append(f"GQA peak at {fmt_shape(r['shape'])}: attention {ours / MiB:.0f} MiB vs "
                         f"direct SDPA {direct / MiB:.0f} MiB: "
                         f"{'met' if ours <= direct else 'MISSED'}")
        if s >= 8192:
            eager = r["attention eager tier"]
            lines.append(f"eager tier extra at {fmt_shape(r['shape'])}: {eager / MiB:.0f} MiB "
                         f"(target < 1024 MiB): {'met' if eager < 2**30 else 'MISSED'}")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--quick", action="store_true", help="small shapes (for a CPU trial)")
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--out", default=os.environ.get("OUT", "."))
    parser.add_argument("--skip", default="",
                        help="comma list of: parity,agree,checks,perf,eager,mem,hf,fuse")
    parser.add_argument("--model-rounds", type=int, default=6,
                        help="interleaved rounds per Hugging Face workload")
    args = parser.parse_args(argv)
    dev = torch.device(args.device)
    skip = set(filter(None, args.skip.split(",")))
    if dev.type == "cuda" and not torch.cuda.is_available():
        print("no CUDA device; use --device cpu --quick", file=sys.stderr)
        return 2
    if rt.is_rocm():
        print("note: ROCm build: tier 1 (aiter) may be used; parity rows then compare "
              "different kernels", file=sys.stderr)
    torch.manual_seed(0)
    env = environment(dev)
    shapes = QUICK_SHAPES if args.quick else PERF_SHAPES
    t0 = time.time()
    parity_rows = [] if "parity" in skip else parity(dev, args.quick)
    print(f"parity done ({time.time() - t0:.0f}s)", flush=True)
    agree_rows = [] if "agree" in skip else agreement(dev, args.quick)
    print(f"agreement done ({time.time() - t0:.0f}s)", flush=True)
    check_rows = [] if "checks" in skip else checks(dev, args.quick)
    print(f"checks done ({time.time() - t0:.0f}s)", flush=True)
    perf_rows = [] if "perf" in skip else perf(dev, shapes, torch.bfloat16, args.rounds)
    print(f"timing done ({time.time() - t0:.0f}s)", flush=True)
    eager_rows = [] if "eager" in skip else eager_time(dev, shapes, torch.bfloat16)
    print(f"eager timing done ({time.time() - t0:.0f}s)", flush=True)
    mem_rows = [] if ("mem" in skip or dev.type != "cuda") else memory(dev, shapes,
                                                                       torch.bfloat16)
    print(f"memory done ({time.time() - t0:.0f}s)", flush=True)
    hf_lines, hf_results, fuse_lines, fuse_results = [], [], [], []
    if not {"hf", "fuse"} <= skip:
        model, config, hf_lines, hf_results = hf_section(dev, args.quick, args.model_rounds)
        print(f"Hugging Face model done ({time.time() - t0:.0f}s)", flush=True)
        if "hf" in skip:
            hf_lines, hf_results = [], []
        if "fuse" not in skip:
            set_attention(model, "sdpa")
            fuse_lines, fuse_results, fuse_info = fuse_section(model, config, dev, args.quick,
                                                               args.model_rounds)
            fuse_results.append(fuse_info)
            print(f"fusion done ({time.time() - t0:.0f}s)", flush=True)
        model = None
    text = render(env, parity_rows, agree_rows, perf_rows, eager_rows, mem_rows)
    text += "\n" + render_extra(check_rows, hf_lines, fuse_lines)
    goal_lines = targets(perf_rows, mem_rows)
    text += "\n#### Targets\n\n" + "\n".join(f"- {line}" for line in goal_lines) + "\n"
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "runtime_gpu.md").write_text(text, encoding="utf-8")
    payload = {"environment": env, "parity": parity_rows, "agreement": agree_rows,
               "checks": check_rows, "perf": perf_rows, "eager": eager_rows, "memory": mem_rows,
               "hf": hf_results, "fuse": fuse_results, "targets": goal_lines}
    (out_dir / "runtime_gpu.json").write_text(json.dumps(payload, indent=1, default=str),
                                              encoding="utf-8")
    print(text)
    bad = [r for r in parity_rows if r[3] in ("CHANGED", "NOT SET")]
    bad += [r for r in agree_rows if r[7] != "pass"]
    bad += [r for r in check_rows if r[2] == "FAIL"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
