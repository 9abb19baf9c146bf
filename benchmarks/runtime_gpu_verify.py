"""Check rocmlint.runtime's newer behaviour on a GPU, and answer whether
``attn_implementation="rocm"`` decodes slower than ``"sdpa"``.

Run on an NVIDIA GPU (H100/H200) with transformers installed:

    python benchmarks/runtime_gpu_verify.py --out results/

Sections:

1. parity: every op of ``runtime_gpu.parity`` (attention in both layouts and
   three dtypes, flash_attn_func, windows, dropout, linear, the activations,
   fusion) against the direct PyTorch call, plus the helpers added since:
   SDPA's ``is_causal`` on one query row with a mask, attention over zero keys
   with backward, ``linear`` with ``USE_AITER_GEMM=1`` set, ``fuse_model``,
   ``configure_allocator``, ``compile_mode`` and ``verify`` left as NVIDIA had
   them;
2. torch.compile (inductor) with ``fullgraph=True``, automatic and
   ``dynamic=True`` shapes, sequence lengths that vary, against the same call
   uncompiled; graph breaks without ``fullgraph``;
3. graph capture: whether the GPU generator refuses its state during capture,
   and a first ``torch.compile`` call inside ``torch.cuda.graph`` (each in a
   fresh process): whether the porting guide's Dynamo RNG patch is needed;
4. decode: a Llama-3.1-8B-shaped model with random weights, "sdpa", "rocm" and
   "sdpa" again in rotating order: whole ``generate`` runs and single decode
   steps with a KV cache, paired differences per round with a bootstrap 95%
   interval, beside the per-call CPU cost of the two attention functions
   times the layer count.

Writes ``runtime_gpu_verify.md`` and ``.json`` into ``--out`` and prints them.
``--device cpu --quick`` runs the same code on a tiny model without a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "benchmarks"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import rocmlint.runtime as rt  # noqa: E402
import runtime_gpu as base  # noqa: E402


def sync(dev):
    base.sync(dev)


# ---------------------------------------------------------------------------
# 1. parity of the newer helpers
# ---------------------------------------------------------------------------

def newer_parity(dev, quick):
    rows = []
    d = 32 if quick else 128
    for dtype in (torch.bfloat16, torch.float32):
        name = str(dtype)[6:]
        # SDPA's top-left causal mask on one query row, with a key mask.
        q, k, v = (t.transpose(1, 2) for t in base.make_qkv(2, 1, 96, 8, 8, d, dtype, dev))
        keep = torch.rand(96, generator=torch.Generator().manual_seed(1)) > 0.3
        keep[0] = True
        keep = keep.to(dev)
        for label, mask in (("bool mask", keep),
                            ("float mask", torch.zeros(96, device=dev, dtype=dtype)
                             .masked_fill(~keep, float("-inf")))):
            merged = (mask & (torch.arange(96, device=dev) == 0) if mask.dtype == torch.bool
                      else mask.masked_fill(torch.arange(96, device=dev) > 0, float("-inf")))
            direct = F.scaled_dot_product_attention(q, k, v, attn_mask=merged.view(1, 96))
            got = rt.attention(q, k, v, attn_mask=mask, is_causal=True, layout="bhsd")
            rows.append(("attention is_causal, one query row", f"{label}, kv=96", name,
                         base.describe_diff(got, direct)))
        # Zero keys: zeros with autograd history.
        zero_keys = base.make_qkv(2, 3, 0, 8, 2, d, dtype, dev)
        q0, k0, v0 = (t.requires_grad_(True) for t in zero_keys)
        try:
            out = rt.attention(q0, k0, v0, causal=True)
            out.float().sum().backward()
            ok = (torch.equal(out, torch.zeros_like(out)) and q0.grad is not None
                  and torch.equal(q0.grad, torch.zeros_like(q0)))
            rows.append(("attention, zero keys, causal", "backward", name,
                         "zeros, zero gradients" if ok else "WRONG"))
        except Exception as exc:
            rows.append(("attention, zero keys, causal", "backward", name,
                         f"FAILED {type(exc).__name__}: {exc}"[:120]))
        x = torch.randn(4, 37, 256, device=dev, dtype=dtype)
        w = torch.randn(384, 256, device=dev, dtype=dtype)
        os.environ["USE_AITER_GEMM"] = "1"
        os.environ["USE_OPTIMIZED_OPS"] = "1"
        try:
            rows.append(("linear, USE_AITER_GEMM=1 set", "[4, 37, 256] x [384, 256]", name,
                         base.describe_diff(rt.linear(x, w), F.linear(x, w))))
            xs = torch.randn(4, 37, 512, device=dev, dtype=dtype)
            rows.append(("silu_and_mul, USE_OPTIMIZED_OPS=1 set", "[4, 37, 512]", name,
                         base.describe_diff(rt.silu_and_mul(xs),
                                            F.silu(xs[..., :256]) * xs[..., 256:])))
        finally:
            del os.environ["USE_AITER_GEMM"], os.environ["USE_OPTIMIZED_OPS"]
    model, _ = base.build_hf_model(dev, True)
    before = dict(model.named_modules())
    report = rt.fuse_model(model)
    rows.append(("fuse_model (no force)", "tiny Llama", "-",
                 "model unchanged" if (dict(model.named_modules()) == before
                                       and report["mlp"] == report["qkv"] == 0)
                 else f"CHANGED {report}"))
    saved = {n: os.environ.get(n) for n in ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF")}
    env = {k: v for k, v in saved.items() if v is not None}
    env_before = dict(env)
    rt.configure_allocator(environ=env)
    rows.append(("configure_allocator()", "no arguments", "-",
                 "unchanged" if env == env_before else f"CHANGED {env}"))
    modes = [None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"]
    rows.append(("compile_mode", ", ".join(str(m) for m in modes), "-",
                 "unchanged" if all(rt.compile_mode(m) == m for m in modes) else "CHANGED"))
    tiny, _ = base.build_hf_model(dev, True)
    ids = torch.randint(0, 256, (2, 16), device=dev)
    # The module itself, so that verify copies it to the CPU for the reference.
    result = rt.verify(tiny, ids, grads=False)
    rows.append(("verify(model, ids) against the CPU", "tiny Llama logits",
                 str(next(tiny.parameters()).dtype)[6:],
                 f"{'passed' if result.passed else 'FAILED'}; max|diff| "
                 f"{max(c.max_abs for c in result.comparisons):.3g}"))
    mlp = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(),
                              torch.nn.Linear(128, 64)).to(dev, torch.bfloat16)
    result = rt.verify(mlp, torch.randn(16, 64, device=dev, dtype=torch.bfloat16),
                       reference="float64")
    worst = max(result.comparisons, key=lambda c: c.max_abs / (c.atol + 1e-30))
    rows.append(("verify(mlp, x, reference='float64')", "forward and backward", "bfloat16",
                 f"{'passed' if result.passed else 'FAILED'}; {len(result.comparisons)} "
                 f"comparisons, largest {worst.name} {worst.max_abs:.3g}"))
    return rows


# ---------------------------------------------------------------------------
# 2. torch.compile
# ---------------------------------------------------------------------------

def compile_section(dev, quick):
    import torch._dynamo as dynamo
    import torch._dynamo.utils as dynamo_utils

    from rocmlint.runtime.flash_attn import flash_attn_func

    rows = []
    dtype = torch.bfloat16 if dev.type == "cuda" else torch.float32
    d = 32 if quick else 128
    calls = {
        "attention(causal=True)": lambda q, k, v: rt.attention(q, k, v, causal=True),
        "flash_attn_func(causal=True)": lambda q, k, v: flash_attn_func(q, k, v, causal=True),
        "attention(is_causal=q.shape[1] > 1)": lambda q, k, v: rt.attention(
            q, k, v, is_causal=q.shape[1] > 1),
        "native SDPA (for comparison)": lambda q, k, v: F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True,
            enable_gqa=True).transpose(1, 2),
    }
    lengths = [(128, 128), (192, 192), (1, 193), (16, 210)]
    for dynamic in (None, True):
        for name, fn in calls.items():
            dynamo.reset()
            compiled = torch.compile(fn, fullgraph=True, dynamic=dynamic)
            worst, status = 0.0, "ok"
            t0 = time.time()
            try:
                for sq, sk in lengths:
                    q, k, v = base.make_qkv(1, sq, sk, 16, 4, d, dtype, dev, seed=sq + sk)
                    got, want = compiled(q, k, v), fn(q, k, v)
                    worst = max(worst, (got.float() - want.float()).abs().max().item())
            except Exception as exc:
                status = f"FAILED {type(exc).__name__}: {str(exc).splitlines()[0]}"[:140]
            rows.append((name, "automatic" if dynamic is None else "dynamic=True",
                         status, f"{worst:.3g}", f"{time.time() - t0:.1f}"))
    breaks = {}
    for name in ("attention(causal=True)", "flash_attn_func(causal=True)"):
        dynamo.reset()
        dynamo_utils.counters.clear()
        compiled = torch.compile(calls[name])
        for sq, sk in lengths:
            compiled(*base.make_qkv(1, sq, sk, 16, 4, d, dtype, dev))
        breaks[name] = sum(dynamo_utils.counters["graph_break"].values())
    return rows, breaks


# ---------------------------------------------------------------------------
# 3. graph capture and Dynamo's RNG bookkeeping
# ---------------------------------------------------------------------------

CAPTURE_CODE = """
import sys, torch
sys.path.insert(0, {root!r})
import rocmlint.runtime as rt
what = {what!r}
x = torch.randn(64, device="cuda")
torch.cuda.synchronize()
if what == "get_rng_state":
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            torch.cuda.get_rng_state()
        print("RESULT allowed")
    except Exception as exc:
        print("RESULT refused:", type(exc).__name__, str(exc).splitlines()[0][:100])
    sys.exit(0)
f = torch.compile(lambda t: torch.sin(t) * 2 + 1, backend="aot_eager")
g = torch.cuda.CUDAGraph()
try:
    with torch.cuda.graph(g):
        y = f(x)
    g.replay()
    torch.cuda.synchronize()
    ok = torch.allclose(y, torch.sin(x) * 2 + 1)
    print("RESULT captured and replayed" + ("" if ok else " (WRONG values)"))
except Exception as exc:
    print("RESULT failed:", type(exc).__name__, str(exc).splitlines()[0][:140])
"""


def capture_section(dev):
    if dev.type != "cuda":
        return [("graph capture", "needs a GPU")]
    rows = []
    for what in ("get_rng_state", "compiled inside capture"):
        code = CAPTURE_CODE.format(root=str(REPO_ROOT), what=what)
        proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                              capture_output=True, text=True, timeout=240)
        result = [line[7:] for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
        rows.append((what, result[0] if result else
                     f"no result (exit {proc.returncode}): {proc.stderr.strip()[-200:]}"))
    return rows


# ---------------------------------------------------------------------------
# 4. decode: "rocm" against "sdpa"
# ---------------------------------------------------------------------------

def bootstrap(values, reps=4000, seed=0):
    rng = random.Random(seed)
    n = len(values)
    meds = sorted(statistics.median(rng.choices(values, k=n)) for _ in range(reps))
    return meds[int(0.025 * reps)], meds[int(0.975 * reps)]


def paired(samples, a, b):
    """Per-round relative difference of b against a, in percent."""
    return [100.0 * (y - x) / x for x, y in zip(samples[a], samples[b])]


def rotating(variants, dev, rounds):
    names = list(variants)
    samples = {n: [] for n in names}
    for name in names:
        variants[name]()
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            samples[name].append(base.wall(variants[name], dev))
    return samples


def decode_section(dev, quick, rounds, steps):
    import transformers
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    import rocmlint.runtime.transformers as rocm_hf

    rocm_hf.register("rocm")
    model, config = base.build_hf_model(dev, quick)
    gen = torch.Generator(device=dev).manual_seed(5)
    prompt = torch.randint(0, config.vocab_size, (1, 64 if quick else 512), device=dev,
                           generator=gen)
    new = 8 if quick else 32
    lines = [f"transformers {transformers.__version__}; {config.num_hidden_layers} layers, "
             f"hidden {config.hidden_size}, {config.num_attention_heads}/"
             f"{config.num_key_value_heads} heads, random weights, "
             f"{next(model.parameters()).dtype}; {rounds} rounds in rotating order "
             "('sdpa', 'rocm', 'sdpa again').", ""]
    results = {}

    def generate(impl):
        def run():
            base.set_attention(model, impl)
            model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=new,
                           min_new_tokens=new, do_sample=False, pad_token_id=0)
        return run

    with torch.no_grad():
        samples = rotating({"sdpa": generate("sdpa"), "rocm": generate("rocm"),
                            "sdpa again": generate("sdpa")}, dev, rounds)
    results["generate"] = samples

    # Single decode steps with a KV cache of the prompt, no generate() loop
    # around them.  Each variant keeps its own cache, which grows by the same
    # number of tokens per round for every variant.
    def steps_of(impl):
        base.set_attention(model, impl)
        out = model(prompt, use_cache=True)
        cache = out.past_key_values
        token = out.logits[:, -1:].argmax(-1)

        def run():
            base.set_attention(model, impl)
            nonlocal token
            for _ in range(steps):
                token = model(token, past_key_values=cache, use_cache=True).logits[:, -1:] \
                    .argmax(-1)
        return run

    with torch.no_grad():
        step_samples = rotating({"sdpa": steps_of("sdpa"), "rocm": steps_of("rocm"),
                                 "sdpa again": steps_of("sdpa")}, dev, rounds)
    results["steps"] = step_samples

    # The attention functions alone, on the decode shapes, CPU time per call.
    module = model.model.layers[0].self_attn
    hq, hk, d = config.num_attention_heads, config.num_key_value_heads, \
        config.hidden_size // config.num_attention_heads
    dtype = next(model.parameters()).dtype
    q = torch.randn(1, hq, 1, d, device=dev, dtype=dtype)
    k = torch.randn(1, hk, prompt.shape[1] + 1, d, device=dev, dtype=dtype)
    v = torch.randn_like(k)
    fns = {"sdpa": lambda: sdpa_attention_forward(module, q, k, v, None, dropout=0.0,
                                                  scaling=d ** -0.5, is_causal=True),
           "rocm": lambda: rocm_hf.attention_forward(module, q, k, v, None, dropout=0.0,
                                                     scaling=d ** -0.5, is_causal=True)}
    per_call = {n: [] for n in fns}
    calls = 200 if quick else 2000
    for fn in fns.values():
        for _ in range(50):
            fn()
    sync(dev)
    for r in range(15):
        for name in (list(fns) if r % 2 == 0 else list(fns)[::-1]):
            sync(dev)
            t0 = time.perf_counter()
            for _ in range(calls):
                fns[name]()
            t1 = time.perf_counter()  # CPU time to issue the calls
            sync(dev)
            per_call[name].append((t1 - t0) / calls * 1e6)
    call_cost = {n: statistics.median(v) for n, v in per_call.items()}
    extra_us = call_cost["rocm"] - call_cost["sdpa"]

    lines.append("| measurement | sdpa | rocm | sdpa again | rocm vs sdpa: median of per-round "
                 "differences (95% CI) | sdpa again vs sdpa (the noise) |")
    lines.append("|---|---|---|---|---|---|")
    verdict = {}
    for label, s, unit, scale in (
            (f"generate 1 x {new} after {prompt.shape[1]} (s)", samples, "s", 1.0),
            (f"{steps} decode steps with a cache (ms)", step_samples, "ms", 1e3)):
        med = {n: statistics.median(v) * scale for n, v in s.items()}
        diff = paired(s, "sdpa", "rocm")
        noise = paired(s, "sdpa", "sdpa again")
        lo, hi = bootstrap(diff)
        nlo, nhi = bootstrap(noise)
        verdict[label] = {"diff_pct": statistics.median(diff), "ci": (lo, hi),
                          "noise_pct": statistics.median(noise), "noise_ci": (nlo, nhi),
                          "medians": med}
        lines.append(f"| {label} | {med['sdpa']:.4g} | {med['rocm']:.4g} | "
                     f"{med['sdpa again']:.4g} | {statistics.median(diff):+.2f}% "
                     f"({lo:+.2f}..{hi:+.2f}) | {statistics.median(noise):+.2f}% "
                     f"({nlo:+.2f}..{nhi:+.2f}) |")
    # Where in its round a run stood: the first run of a round was measured
    # up to 2.7 times slower than the other two on the H100 (a position
    # effect, whatever the variant), which the rotation spreads evenly.
    names = list(step_samples)
    for label, s in (("generate", samples), ("decode steps", step_samples)):
        by_position: dict[int, list[float]] = {0: [], 1: [], 2: []}
        for r in range(rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for position, name in enumerate(order):
                by_position[position].append(s[name][r])
        lines.append(f"- {label}, median by position in the round (first, second, third): "
                     + ", ".join(f"{statistics.median(v):.4g} s" for v in by_position.values()))
    per_token_us = extra_us * config.num_hidden_layers
    step_ms = verdict[f"{steps} decode steps with a cache (ms)"]["medians"]["sdpa"] / steps
    lines.append("")
    lines.append(f"- attention function alone, CPU time per call (median of 15 rounds of "
                 f"{calls}): sdpa_attention_forward {call_cost['sdpa']:.2f} us, rocm "
                 f"attention_forward {call_cost['rocm']:.2f} us: {extra_us:+.2f} us per call, "
                 f"x {config.num_hidden_layers} layers = {per_token_us:+.1f} us per token, "
                 f"{100 * per_token_us / (step_ms * 1e3):+.3f}% of a {step_ms:.2f} ms decode "
                 "step")
    return lines, {"verdict": verdict, "per_call_us": call_cost,
                   "samples": {k: v for k, v in results.items()}}


# ---------------------------------------------------------------------------

SECTIONS = ("parity", "compile", "capture", "decode")


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=15, help="decode rounds per variant")
    parser.add_argument("--steps", type=int, default=32, help="decode steps per round")
    parser.add_argument("--skip", default="", help="comma list of: parity,compile,capture,"
                                                   "decode")
    parser.add_argument("--out", default=os.environ.get("OUT", "."))
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", category=FutureWarning)
    dev = torch.device(args.device)
    skip = set(filter(None, args.skip.split(",")))
    torch.manual_seed(0)
    env = base.environment(dev)
    data = {"environment": env}
    parts: dict[str, list[str]] = {}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()

    def save():
        body = [line for name in SECTIONS for line in parts.get(name, [])]
        text = "\n".join([f"Device: {env}", ""] + body) + "\n"
        (out / "runtime_gpu_verify.md").write_text(text, encoding="utf-8")
        (out / "runtime_gpu_verify.json").write_text(json.dumps(data, indent=1, default=str),
                                                     encoding="utf-8")
        return text

    # The decode timings run first, on a GPU nothing else has warmed or fragmented.
    for name in ("decode", "parity", "capture", "compile"):
        if name in skip:
            continue
        if name == "decode":
            decode_lines, data["decode"] = decode_section(dev, args.quick, args.rounds,
                                                          args.steps)
            parts[name] = ["#### Decode: attn_implementation 'rocm' against 'sdpa'", ""] + \
                decode_lines + [""]
        elif name == "parity":
            rows = base.parity(dev, args.quick) + newer_parity(dev, args.quick)
            bad = [r for r in rows if not any(ok in r[-1] for ok in (
                "bit-identical", "unchanged", "passed", "zeros, zero gradients"))]
            parts[name] = ["#### Parity on this device", ""] + \
                table(("op", "case", "dtype", "result"), rows) + \
                ["", f"{len(rows)} rows, {len(bad)} not bit-identical / unchanged / passed "
                 "(max|diff| rows compare different kernels on purpose: see the case)", ""]
            data["parity"] = rows
        elif name == "capture":
            rows = capture_section(dev)
            parts[name] = ["#### torch.compile inside CUDA graph capture (fresh process each)",
                           ""] + table(("case", "result"), rows) + [""]
            data["capture"] = rows
        else:
            rows, breaks = compile_section(dev, args.quick)
            parts[name] = ["#### torch.compile (inductor), fullgraph=True, lengths varying",
                           ""] + table(("call", "shapes", "result", "max|diff| vs uncompiled",
                                        "seconds"), rows) + \
                ["", "Graph breaks without fullgraph over the same calls: " + ", ".join(
                    f"{k}: {v}" for k, v in breaks.items()), ""]
            data["compile"] = {"rows": rows, "graph_breaks": breaks}
        save()
        print(f"{name} done ({time.time() - t0:.0f}s)", flush=True)
    print(save())
    return 0


if __name__ == "__main__":
    sys.exit(main())
