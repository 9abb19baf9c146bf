"""The Python text tests (rocmlint.python.prefilter): a file they drop has no hit.

Each test below checks the promise the same way: the check's matcher, run on the file without
the text test (`relevant=[check]`, gated hits kept), finds a hit exactly where the text test
keeps the file, for every invalid example of every Python check, for spellings that only an
alias, a line break or a string in pieces makes, and for programs made at random from such
pieces.
"""

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocmlint.catalog.loader import load_catalog
from rocmlint.engine import check_python_tree, check_source, relevant_checks, select_checks, text_test
from rocmlint.python.prefilter import PythonText
from rocmlint.source import SourceFile

CATALOG = {c.id: c for c in load_catalog()}
PYTHON_CHECKS = [c for c in CATALOG.values() if "python" in c.languages]
TESTED = [c for c in PYTHON_CHECKS if text_test(c) is not None]


def _hits(check, code: str, path: str = "example.py") -> list:
    """The check's hits in `code`, gated ones too, with no text test asked."""
    findings, problems = check_source(SourceFile(path, code, "python"), [check], keep_gated=True, relevant=[check])
    assert not [p for p in problems if p.internal], problems
    return findings


def _kept(check, code: str) -> bool:
    return text_test(check)(PythonText(code))


def test_most_python_checks_have_a_text_test():
    # Every `python` matcher gets one from its spec; of the function matchers, those listed.
    assert {c.id for c in PYTHON_CHECKS if c.matcher_kind == "python"} <= {c.id for c in TESTED}
    assert {"ROCM013", "ROCM103", "ROCM105", "ROCM106", "ROCM112"} <= {c.id for c in TESTED}


INVALID = [
    pytest.param(c, e, id=f"{c.id}-invalid-{i}")
    for c in TESTED
    for i, e in enumerate(c.invalid_examples)
    if (e.file or "example.py").endswith(".py")
]


@pytest.mark.parametrize("check,example", INVALID)
def test_every_invalid_example_passes_its_checks_text_test(check, example):
    assert _kept(check, example.code)
    source = SourceFile(example.file or "example.py", example.code, "python")
    assert check in relevant_checks(source, [check])


# (check, code): each has a hit (asserted), reached through a spelling the text test must allow.
SPELLINGS = [
    ("ROCM104", "from torch import float8_e4m3fn as f8\nx = t.to(f8)\n"),
    ("ROCM104", "import torch as T\nx = t.to(T.float8_e4m3fn)\n"),
    ("ROCM009", "import torch._inductor.config as ic\nic.triton.cudagraphs = True\n"),
    ("ROCM009", "from torch._inductor import config\nconfig.triton.cudagraphs = True\n"),
    ("ROCM009", "import torch\ntorch._inductor.config.patch({'triton.cudagraphs': True})\n"),
    ("ROCM009", "import torch\ntorch.compile(m, options={'triton.' 'cudagraphs': True})\n"),
    ("ROCM009", "import os\nos.environ['TORCHINDUCTOR_' 'CUDAGRAPHS'] = '1'  # cudagraphs\n"),
    ("ROCM009", "import os\nos.environ['TORCHINDUCTOR_\\x43UDAGRAPHS'] = '1'  # cudagraphs\n"),
    ("ROCM009", "import os\nos.environ['TORCHINDUCTOR_\\\nCUDAGRAPHS'] = '1'  # cudagraphs\n"),
    ("ROCM009", "import os\nos.environ.update(TORCHINDUCTOR_CUDAGRAPHS='1')\n"),
    ("ROCM010", "import torch\nfrom torch.cuda import graph as g\nwith g(cg):\n    torch.cuda.synchronize()\n"),
    ("ROCM010", "import torch\ncuda = torch.cuda\nwith cuda.graph(g):\n    x.item()\n"),
    ("ROCM010", "import torch\nc = torch.cuda\nd = c\nwith d.graph(g):\n    x.item()\n"),
    ("ROCM010", "import torch\nc = (torch.cuda)\nwith c.graph(g):\n    x.item()\n"),
    ("ROCM010", "import torch\nwith (torch.cuda\n      .graph)(g):\n    x.item()\n"),
    ("ROCM010", "import torch\nwith (torch.cuda.  # capture\n      graph)(g):\n    x.item()\n"),
    ("ROCM010", "import torch\nwith torch.cuda.\\\n        graph(g):\n    x.item()\n"),
    ("ROCM010", "import torch\nwith torch . cuda . graph (g):\n    x . item ()\n"),
    ("ROCM010", "import torch.cuda.graphs as G\nwith G.graph(g):\n    x.item()\n"),
    ("ROCM010", "from torch.cuda import (  # capture\n    graph,\n)\nwith graph(g):\n    x.item()\n"),
    ("ROCM008", "import torch\nsetattr(torch.backends.cudnn, 'benchmark', True)\n"),
    ("ROCM008", "import torch, unittest.mock\nunittest.mock.patch.object(torch.backends.cudnn, 'bench' 'mark', True)\n"),
    ("ROCM008", "import torch\ntorch.backends.cudnn.benchmark: bool = True\n"),
    ("ROCM008", "import torch\ntorch.backends.cudnn.benchmark |= True\n"),
    ("ROCM008", "import torch\n(torch.backends.cudnn\n    .benchmark) = True\n"),
    ("ROCM008", "import torch\n(torch.backends.cudnn.benchmark\n) = True\n"),
    ("ROCM008", "import torch\nx = torch.backends.cudnn.benchmark = True\n"),
    ("ROCM008", "import torch\ntorch.backends.cudnn.ｂｅｎｃｈｍａｒｋ = True  # benchmark\n"),
    ("ROCM008", "from torch.backends import cudnn as c\nc.benchmark = True\n"),
    ("ROCM007", "import torch\ntorch.set_float32_matmul_precision('high')\n"),
    ("ROCM007", "from torch import set_float32_matmul_precision as p\np(precision='high')\n"),
    ("ROCM002", "import torch\nopts = dict(mode='reduce-overhead')\ntorch.compile(m, **opts)\n"),
    ("ROCM002", "import torch\ntorch.compile(m, **{'mode': 'reduce-overhead'})\n"),
    ("ROCM002", "from torch import compile as tc\ntc(m, mode='reduce-overhead')\n"),
    ("ROCM002", "import functools, torch\nf = functools.partial(torch.compile, mode='reduce-overhead')\n"),
    ("ROCM011", "import importlib\nimportlib.import_module('flash_attn')\n"),
    ("ROCM011", "__import__('flash_' 'attn')  # flash_attn\n"),
    ("ROCM001", "from pynvml import nvmlInit\n"),
    ("ROCM013", "import torch\nops = torch.ops\nf = ops.aiter.mha_fwd\n"),
    ("ROCM112", "from torch.nn.attention import sdpa_kernel as k, SDPBackend\nwith k(SDPBackend.CUDNN_ATTENTION):\n    pass\n"),
    ("ROCM112", "import torch\naten = torch.ops.aten\ny = aten._scaled_dot_product_cudnn_attention.default(q, k, v)\n"),
    ("ROCM013", "from torch.ops import aiter as a\nf = a.mha_fwd\n"),
    ("ROCM013", "import importlib\nm = importlib.import_module('ait' 'er.ops')  # aiter\n"),
    ("ROCM011", "import os, sys as system, \\\n    flash_attn\n"),
    ("ROCM011", "import os . path,flash_attn_interface as fa\n"),
    ("ROCM113", "from flash_attn . ops import (  # fused\n    layer_norm,\n)\n"),
    ("ROCM113", "import rotary_emb\n"),
    ("ROCM006", "import os\nos.environ.setdefault('PYTORCH_CUDA_ALLOC_CONF', 'max_split_size_mb:128')\n"),
    ("ROCM103", "from torch.cuda import get_device_capability as cap\nif cap() >= (9, 0):\n    pass\n"),
    ("ROCM103", "import torch\ngdc = torch.cuda.get_device_capability\nif gdc() >= (9, 0):\n    pass\n"),
    ("ROCM106", "from subprocess import run as r\nr(['nvcc', '--version'])\n"),
    ("ROCM106", "import subprocess as sp\nsp.check_output('nvcc --version', shell=True)\n"),
    ("ROCM105", "import os\nos.system('nvidia-smi')\n"),
]


@pytest.mark.parametrize("check_id,code", SPELLINGS)
def test_spellings_the_checks_match_pass_the_text_test(check_id, code):
    check = CATALOG[check_id]
    assert _hits(check, code), "the example must be a hit for this test to mean anything"
    assert _kept(check, code)


# (check, code): no hit, and the text test drops the file, so that it is not parsed.
DROPPED = [
    ("ROCM010", "def f(gm):\n    for node in gm.graph.nodes:\n        with torch.no_grad():\n            x.item()\n"),
    ("ROCM010", "import torch.cuda.graphs\nwith ctx():\n    x.item()\n"),
    ("ROCM010", "gm = make_fx(f)(x)\nwith gm.graph.inserting_before(n):\n    x.item()\n"),
    ("ROCM008", "import torch\nprint(torch.backends.cudnn.benchmark)\nx = torch.backends.cudnn.benchmark\n"),
    ("ROCM008", "run(benchmark=True, for_benchmark=False)\n"),
    ("ROCM009", "from torch._inductor import config\nif config.triton.cudagraphs:\n    pass\n"),
    ("ROCM009", "# cudagraphs: see its environment variable (escapes such as \\x or \\U)\n"),
    ("ROCM103", "# torch.cuda.get_device_capability returns (major, minor).\n"),
    ("ROCM106", "NVCC = 'nvcc'\n"),
    ("ROCM113", "self.rotary_emb = RotaryEmbedding(config)  # flash_attn\n"),
    ("ROCM011", "if is_flash_attn_available():\n    impl = 'flash_attn'\n"),
    ("ROCM013", "waiter = Waiter()\n"),
    ("ROCM112", "# SDPBackend.CUDNN_ATTENTION is chosen by torch when available\nbackend = 'cudnn_attention'\n"),
]


@pytest.mark.parametrize("check_id,code", DROPPED)
def test_files_without_a_possible_hit_are_dropped(check_id, code):
    check = CATALOG[check_id]
    assert any(m in code for m in check.markers)
    assert not _hits(check, code)
    assert not _kept(check, code)


def test_a_dropped_file_is_not_parsed():
    # "graph" is ROCM010's marker, but nothing here can be a `with torch.cuda.graph(...)`: the
    # file is not parsed, so its syntax error is not reported (no check could match it).
    checks = select_checks(preview=True)
    assert check_source(SourceFile("x.py", "# the graph\ndef broken(:\n", "python"), checks) == ([], [])
    findings, problems = check_source(SourceFile("y.py", "with torch.cuda.graph(g):\n    x.item()\ndef broken(:\n", "python"), checks)
    assert findings == [] and "syntax error" in problems[0].reason


def test_the_flake8_face_is_tested_the_same_way():
    code = "import torch.backends.cudnn as c\nc.benchmark = True\n"
    found = check_python_tree(ast.parse(code), "m.py", code, [CATALOG["ROCM008"]])
    assert [f.check_id for f in found] == ["ROCM008"]
    dropped = "import torch\nx = torch.backends.cudnn.benchmark\n"
    assert check_python_tree(ast.parse(dropped), "m.py", dropped, [CATALOG["ROCM008"]]) == []


# --- programs made at random from the pieces the checks' names are spelled with -----------------

# (qualified name, how a hit uses it): `{name}` is the name as the program spells it.
_USES = [
    ("torch.backends.cudnn.benchmark", "{name} = True"),
    ("torch.backends.cudnn.benchmark", "({name}) = True"),
    ("torch._inductor.config.triton.cudagraphs", "{name} = True"),
    ("torch.backends.cuda.matmul.allow_tf32", "{name}: bool = True"),
    ("torch.cuda.graph", "with {name}(g):\n    x.item()"),
    ("torch.cuda.graphs.graph", "with ({name})(g):\n    torch.cuda.synchronize()"),
    ("torch.compile", "{name}(m, mode='reduce-overhead')"),
    ("torch.compile", "{name}(m, **{{'mode': 'max-autotune'}})"),
    ("torch.float8_e4m3fn", "y = t.to({name})"),
    ("torch.set_float32_matmul_precision", "{name}('high')"),
    ("pynvml.nvmlInit", "def f():\n    {name}()"),
    ("subprocess.run", "{name}(['nvcc', '-V'])"),
    ("torch.cuda.get_device_capability", "if {name}() >= (9, 0):\n    pass"),
]
_DOTS = [".", " . ", ".\\\n    ", "\n    .", ".  # c\n    "]


@st.composite
def _spelled(draw, qualified: str):
    """(lines that bind a name, the name as the use spells it) for `qualified`: the first
    `kept` parts stand for a local name (an import, an alias, an assignment, or the parts as
    written), the rest are written after it with dots spelled in any of several ways."""
    parts = qualified.split(".")
    kept = draw(st.integers(1, len(parts)))
    prefix, rest = parts[:kept], parts[kept:]
    local = draw(st.sampled_from(["n", "alias_", prefix[-1]]))
    ways = [f"import {'.'.join(prefix)} as {local}", f"{local} = {'.'.join(prefix)}"]
    if kept > 1:
        ways.append(f"from {'.'.join(prefix[:-1])} import {prefix[-1]}" + (f" as {local}" if local != prefix[-1] else ""))
    else:
        ways.append(f"import {prefix[0]}")
        local = prefix[0]
    binding = draw(st.sampled_from(ways))
    if binding.startswith("import ") and " as " not in binding:
        local = prefix[0]
    if binding.startswith(f"{local} = "):
        binding = f"import {parts[0]}\n{binding}"
    name = local
    for part in rest:
        name += draw(st.sampled_from(_DOTS)) + part
    return binding, (f"({name})" if "\n" in name else name)


@st.composite
def _programs(draw):
    qualified, use = draw(st.sampled_from(_USES))
    binding, name = draw(_spelled(qualified))
    noise = draw(st.lists(st.sampled_from(["x = 1", "# graph benchmark cudagraphs", '"""torch.cuda.graph"""']), max_size=2))
    return "\n".join([*noise, binding, use.format(name=name)]) + "\n"


@settings(max_examples=400, deadline=None)
@given(code=_programs())
def test_random_programs_with_a_hit_pass_the_text_test(code):
    try:
        ast.parse(code)
    except SyntaxError:
        return  # not Python: no check can match it, and none is asked to
    for check in TESTED:
        if any(m in code for m in check.markers) and _hits(check, code):
            assert _kept(check, code), check.id


def test_the_random_programs_are_hits():
    # The property above means something only where the programs are hits.
    hits = []

    @settings(max_examples=100, deadline=None, database=None)
    @given(code=_programs())
    def collect(code):
        try:
            ast.parse(code)
        except SyntaxError:
            return
        hits.append(any(any(m in code for m in c.markers) and _hits(c, code) for c in TESTED))

    collect()
    assert sum(hits) > len(hits) / 2
