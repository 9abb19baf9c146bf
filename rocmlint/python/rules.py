"""`function` matchers for Python checks whose pattern the declarative `python` matcher
cannot say. Each takes a SourceFile and yields Matches; gates come from the shared gate
module through `index.gate`, as for every other check."""

from __future__ import annotations

import ast
import operator
import re
from typing import Iterator

from rocmlint.matchers import Capture, Match
from rocmlint.python.gates import SKIP_DECORATORS
from rocmlint.python.index import UNKNOWN, may_name


def _span(source, first: ast.AST, last: ast.AST | None = None) -> tuple[int, int]:
    last = last or first
    start = source.offset(first.lineno, source.byte_col_to_char(first.lineno, first.col_offset))
    end = source.offset(last.end_lineno, source.byte_col_to_char(last.end_lineno, last.end_col_offset))
    return start, end


def _capture(source, node: ast.AST) -> Capture:
    start, end = _span(source, node)
    return Capture(source.text[start:end], start, end)


def _text(source, node: ast.AST) -> str:
    return _capture(source, node).text


# --- ROCM103: get_device_capability() compared with numbers -----------------------------------

_OPERATORS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
              ast.Eq: operator.eq, ast.NotEq: operator.ne}


def _capability_kind(index, expr: ast.AST, depth: int = 0) -> str | None:
    """What part of the device capability `expr` is: "tuple" ((major, minor)), "major",
    "minor", "int" (major * 10 + minor), or None when it is not derived from it."""
    if depth > 4:
        return None
    if isinstance(expr, ast.Call):
        name = index.qualified_name(expr.func) or ""
        if name.endswith("get_device_capability"):
            return "tuple"
        return None
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant) and expr.slice.value in (0, 1):
        if _capability_kind(index, expr.value, depth + 1) == "tuple":
            return "major" if expr.slice.value == 0 else "minor"
        return None
    if isinstance(expr, ast.Attribute) and expr.attr in ("major", "minor"):
        if isinstance(expr.value, ast.Call) and (index.qualified_name(expr.value.func) or "").endswith("get_device_properties"):
            return expr.attr
        if _capability_kind(index, expr.value, depth + 1) == "properties":
            return expr.attr
        return None
    if isinstance(expr, ast.Tuple) and len(expr.elts) == 2:
        kinds = [_capability_kind(index, e, depth + 1) for e in expr.elts]
        return "tuple" if kinds == ["major", "minor"] else None
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        left, right = expr.left, expr.right
        if (isinstance(left, ast.BinOp) and isinstance(left.op, ast.Mult) and isinstance(left.right, ast.Constant)
                and left.right.value == 10 and _capability_kind(index, left.left, depth + 1) == "major"
                and _capability_kind(index, right, depth + 1) == "minor"):
            return "int"
        return None
    if isinstance(expr, ast.Name):
        scope = index.binding_scope(expr.id, expr)
        if scope is None:
            return None
        kinds = set()
        for binding in index.bindings(scope).get(expr.id, []):
            if not isinstance(binding, ast.Assign) or len(binding.targets) != 1:
                return None
            target, value = binding.targets[0], binding.value
            if isinstance(target, ast.Name):
                if isinstance(value, ast.Call) and (index.qualified_name(value.func) or "").endswith("get_device_properties"):
                    kinds.add("properties")
                else:
                    kinds.add(_capability_kind(index, value, depth + 1))
            elif isinstance(target, ast.Tuple) and len(target.elts) == 2:
                position = next((i for i, e in enumerate(target.elts) if isinstance(e, ast.Name) and e.id == expr.id), None)
                if position is None or _capability_kind(index, value, depth + 1) != "tuple":
                    return None
                kinds.add("major" if position == 0 else "minor")
            else:
                return None
        return kinds.pop() if len(kinds) == 1 else None
    return None


def _literal(node: ast.AST):
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return UNKNOWN
    if isinstance(value, bool) or not isinstance(value, (int, float, tuple)):
        return UNKNOWN
    return value


def _as(kind: str, capability: tuple[int, int]):
    major, minor = capability
    return {"tuple": (major, minor), "major": major, "minor": minor, "int": major * 10 + minor}[kind]


# A comparison matters on AMD only where it sends an AMD GPU the way it sends the NVIDIA GPUs
# whose features AMD GPUs lack (Ada's and Hopper's fp8, Hopper's wgmma/TMA, Blackwell), and
# another way than an Ampere GPU: `>= (8, 0)` (bf16, matrix cores) takes the branch AMD GPUs
# have the features of, `== (7, 5)` is false on AMD and on Ampere alike.
_AMPERE = (8, 6)
_NEWER_NVIDIA = ((8, 9), (9, 0), (10, 0), (10, 3), (12, 0))
# Without configured GPUs: the current Instinct GPUs and the RDNA generations ROCm runs on.
_DEFAULT_AMD = ("gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1201")


def capability_comparisons(source, matcher) -> Iterator[Match]:
    """`torch.cuda.get_device_capability() >= (9, 0)`, `major >= 9` after `major, minor =
    ...`, `cap[0] == 9`, `major * 10 + minor >= 90`, `get_device_properties(d).major >= 9`.
    Reported where an AMD GPU (the configured ones, else current ones) takes the branch of the
    NVIDIA architectures it lacks the features of (see _NEWER_NVIDIA), and $ARCHS names those
    GPUs; elsewhere the comparison is gated with the reason."""
    from rocmlint.catalog.arch_facts import arch_facts

    index = source.python_index
    configured = bool(source.target.archs)
    archs = [arch_facts(a) for a in (source.target.archs or _DEFAULT_AMD)]
    for compare in index.compares:
        if len(compare.ops) != 1 or type(compare.ops[0]) not in _OPERATORS:
            continue
        left, right = compare.left, compare.comparators[0]
        kind, literal = _capability_kind(index, left), _literal(right)
        flipped = False
        if kind is None:
            kind, literal, flipped = _capability_kind(index, right), _literal(left), True
        if kind is None or kind == "properties" or literal is UNKNOWN:
            continue
        compare_op = _OPERATORS[type(compare.ops[0])]

        def holds(capability: tuple[int, int]):
            mine = _as(kind, capability)
            try:
                return compare_op(literal, mine) if flipped else compare_op(mine, literal)
            except TypeError:
                return None  # a literal of another shape: say nothing about it

        ampere, newer = holds(_AMPERE), {holds(c) for c in _NEWER_NVIDIA}
        taken = [f"{facts.name} {facts.capability}" for facts in archs
                 if (mine := holds(facts.capability)) is None or (mine != ampere and mine in newer)]
        gate = index.gate(compare)
        if not taken and gate is None:
            said = ", ".join(f"{f.name} {f.capability}" for f in archs)
            where = "the configured GPUs" if configured else "current AMD GPUs"
            gate = f"target: harmless on {where} ({said}): they take the branch an Ampere GPU {_AMPERE} takes"
        start, end = _span(source, compare)
        archs_text = ", ".join(taken) if taken else ", ".join(f"{f.name} {f.capability}" for f in archs)
        yield Match(start, end, gate=gate, captures={"ARCHS": Capture(archs_text, start, end)}, node=compare)


# --- ROCM102: torch.version.cuda as "is there a GPU" ---------------------------------------

_DEVICE_STRINGS = re.compile(r"^(cpu|cuda(:\d+)?)$")
_GPU_WORDS = re.compile(r"\bgpus?\b|no cuda device|cuda (is )?not available|requires? (a )?cuda device", re.I)


def _mentions_cuda_version(index, node: ast.AST) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and (index.qualified_name(sub) or "").endswith("version.cuda"):
            return True
    return False


def _names_other_stack(index, node: ast.AST) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and (index.qualified_name(sub) or "").endswith("version.hip"):
            return True
        if isinstance(sub, (ast.Name, ast.Attribute)):
            word = sub.id if isinstance(sub, ast.Name) else sub.attr
            if re.search(r"rocm|hip|amd", word, re.I):
                return True
    return False


def _chooses_device(index, node: ast.AST) -> bool:
    """Does `node` hold a device string used as a value (`"cpu"`, `.to("cuda")`), not as a
    key (`info["cuda"] = ...`, `{"cuda": ...}`) or in a comparison?"""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and _DEVICE_STRINGS.match(sub.value):
            parent = index.parents.get(id(sub))
            if isinstance(parent, ast.Subscript) and parent.slice is sub:
                continue
            if isinstance(parent, ast.Dict) and any(sub is k for k in parent.keys):
                continue
            if isinstance(parent, ast.Compare):
                continue
            return True
    return False


def _asks_for_architecture(index, test: ast.AST) -> bool:
    """Does `test` also compare the device's capability (`get_device_capability() >= (9, 0)`)?
    Then a refusal or skip under it is about an architecture, not about whether there is a GPU
    (ROCM103 reads the comparison)."""
    return any(_capability_kind(index, side) not in (None, "properties")
               for sub in ast.walk(test) if isinstance(sub, ast.Compare)
               for side in [sub.left, *sub.comparators])


def cuda_version_as_gpu_check(source, matcher) -> Iterator[Match]:
    """A test on `torch.version.cuda` (and on no other stack) that picks the device
    (`"cuda" if torch.version.cuda else "cpu"`), or skips or refuses with a message about
    GPUs: on ROCm builds `torch.version.cuda` is None although the GPU works."""
    index = source.python_index
    tests: list[tuple[ast.AST, ast.AST]] = [(node.test, node) for node in index.branches]  # (the test, what it decides)
    for node in index.calls:
        if node.args and may_name(node.func, SKIP_DECORATORS) and (index.qualified_name(node.func) or "").rsplit(".", 1)[-1] in SKIP_DECORATORS:
            tests.append((node.args[0], node))
    for test, decided in tests:
        if not _mentions_cuda_version(index, test) or _names_other_stack(index, test):
            continue
        if isinstance(decided, ast.IfExp):
            hit = _chooses_device(index, decided.body) or _chooses_device(index, decided.orelse)
        elif isinstance(decided, ast.If):
            hit = any(_chooses_device(index, s) for s in decided.body + decided.orelse) or (not _asks_for_architecture(index, test) and any(
                isinstance(s, ast.Raise) and s.exc is not None and any(
                    isinstance(c, ast.Constant) and isinstance(c.value, str) and _GPU_WORDS.search(c.value) for c in ast.walk(s.exc))
                for s in decided.body))
        else:
            hit = not _asks_for_architecture(index, test) and any(
                isinstance(c, ast.Constant) and isinstance(c.value, str) and _GPU_WORDS.search(c.value)
                for k in decided.keywords if k.arg == "reason" for c in ast.walk(k.value))
        if not hit:
            continue
        start, end = _span(source, test)
        # A skip decorator's own test must not gate itself: ask about the decorated function.
        anchor = index.parents.get(id(decided)) if isinstance(decided, ast.Call) else test
        yield Match(start, end, gate=index.gate(anchor or test), captures={"TEST": Capture(source.text[start:end], start, end)}, node=test)


# --- ROCM105 / ROCM106: NVIDIA tools run as subprocesses ------------------------------------

# What runs a program (and shutil.which, which finds one); rocmlint.python.prefilter reads it too.
TOOL_RUNNERS = ("subprocess.run", "subprocess.check_output", "subprocess.check_call", "subprocess.call",
                "subprocess.Popen", "subprocess.getoutput", "subprocess.getstatusoutput", "os.system", "os.popen",
                "shutil.which", "os.execvp", "os.spawnlp")


def _command_words(index, expr: ast.AST) -> list[tuple[str, ast.AST]]:
    """The first word of each command `expr` can be (a string, a list, a name assigned one),
    with the node that writes it."""
    words: list[tuple[str, ast.AST]] = []
    if isinstance(expr, ast.Call) and (index.qualified_name(expr.func) or "") in ("os.path.join", "pathlib.Path", "Path") and expr.args:
        # os.path.join(CUDA_HOME, "bin", "nvcc"): the program is the last part.
        return [(w.rsplit("/", 1)[-1], n) for w, n in _command_words(index, expr.args[-1])]
    if isinstance(expr, (ast.List, ast.Tuple)) and expr.elts:
        if isinstance(expr.elts[0], ast.Call):
            return _command_words(index, expr.elts[0])
        for value in index.values(expr.elts[0]):
            if isinstance(value.literal, str) and value.gate is None:
                words.append((value.literal.strip(), value.node))
        return words
    if isinstance(expr, ast.Name):
        scope = index.binding_scope(expr.id, expr)
        for binding in index.bindings(scope).get(expr.id, []) if scope is not None else []:
            if isinstance(binding, ast.Assign) and isinstance(binding.value, (ast.List, ast.Tuple)) and index.gate(binding) is None:
                words += _command_words(index, binding.value)
    for value in index.values(expr):
        if isinstance(value.literal, str) and value.gate is None and value.literal.strip():
            words.append((value.literal.strip(), value.node))
    return words


def _tool_calls(source, tool: re.Pattern, presence_test_handles: bool) -> Iterator[Match]:
    index = source.python_index
    for call in index.calls:
        name = index.qualified_name(call.func) or ""
        if name not in TOOL_RUNNERS or not call.args:
            continue
        for word, node in _command_words(index, call.args[0]):
            first = word.split()[0] if word.split() else ""
            if tool.match(first.rsplit("/", 1)[-1]):
                start, end = _span(source, call)
                captures = {"TOOL": Capture(first.rsplit("/", 1)[-1], start, end), "CALLEE": _capture(source, call.func)}
                gate = index.gate(call) or _handled(index, call)
                if gate is None and name == "shutil.which":
                    gate = _which_result_tested(index, call, presence_test_handles)
                yield Match(start, end, gate=gate, captures=captures, node=call)
                break


def _handled(index, call: ast.AST) -> str | None:
    """A tool call inside `try:` that catches a missing program (FileNotFoundError, OSError,
    CalledProcessError, Exception) degrades by design; not a finding."""
    child, parent = call, index.parents.get(id(call))
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        if isinstance(parent, ast.Try) and any(child is s for s in parent.body):
            for handler in parent.handlers:
                kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
                for kind in kinds:
                    name = kind.id if isinstance(kind, ast.Name) else kind.attr if isinstance(kind, ast.Attribute) else None
                    if kind is None or name in ("FileNotFoundError", "OSError", "CalledProcessError", "SubprocessError", "Exception", "BaseException"):
                        return f"inside `try:` that handles a missing tool (line {parent.lineno})"
        child, parent = parent, index.parents.get(id(parent))
    return None


def _which_result_tested(index, call: ast.Call, presence_test_handles: bool) -> str | None:
    """`shutil.which(tool)` never fails: it answers None where the tool is missing. Where the
    path it answers is kept and tested before use (`nvcc = shutil.which("nvcc")`, later `if
    nvcc`, `nvcc is None`, `nvcc or fallback`), the code handles an AMD machine by design; the
    call that runs the tool, if any, is the finding. A presence test written on the call
    itself (`if shutil.which("nvcc"):`) handles it too where `presence_test_handles`: not for
    nvidia-smi, whose presence stands for "this machine has a GPU"."""
    child, parent = call, index.parents.get(id(call))
    while parent is not None and not isinstance(parent, ast.stmt):
        if presence_test_handles and (isinstance(parent, (ast.BoolOp, ast.Compare, ast.UnaryOp)) or (
                isinstance(parent, ast.IfExp) and child is parent.test)):
            return "the answer of `shutil.which` is tested (None where the tool is missing)"
        child, parent = parent, index.parents.get(id(parent))
    if presence_test_handles and isinstance(parent, (ast.If, ast.While, ast.Assert)) and child is parent.test:
        return "the answer of `shutil.which` is tested (None where the tool is missing)"
    if isinstance(parent, (ast.Assign, ast.AnnAssign)) and child is parent.value:
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        names = {t.id for t in targets if isinstance(t, ast.Name)}
        scope = index.enclosing(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module))
        tests = [node for node in (ast.walk(scope) if names and scope is not None else ())
                 if isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load) and _in_test(index, node)]
        # `if not nvcc: raise RuntimeError("nvcc is required")` requires the tool: not handled.
        if tests and not any(_raises_on_test(index, node) for node in tests):
            return f"`{tests[0].id}` (None where the tool is missing) is tested on line {tests[0].lineno}"
    return None


def _raises_on_test(index, node: ast.AST) -> bool:
    """Is `node` part of an `if` test one of whose branches ends in `raise`?"""
    child, parent = node, index.parents.get(id(node))
    while parent is not None and not isinstance(parent, ast.stmt):
        child, parent = parent, index.parents.get(id(parent))
    return isinstance(parent, ast.If) and child is parent.test and any(
        branch and isinstance(branch[-1], ast.Raise) for branch in (parent.body, parent.orelse))


def _in_test(index, node: ast.AST) -> bool:
    """Is `node` read as a truth value or compared (`if x`, `not x`, `x is None`, `x or y`)?"""
    parent = index.parents.get(id(node))
    if isinstance(parent, (ast.BoolOp, ast.Compare)) or (isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)):
        return True
    return isinstance(parent, (ast.If, ast.While, ast.Assert, ast.IfExp)) and node is parent.test


_NVIDIA_SMI = re.compile(r"^nvidia-smi(\.exe)?$")
_NVCC = re.compile(r"^nvcc(\.exe)?$")


def nvidia_smi_calls(source, matcher) -> Iterator[Match]:
    return _tool_calls(source, _NVIDIA_SMI, presence_test_handles=False)


def nvcc_calls(source, matcher) -> Iterator[Match]:
    return _tool_calls(source, _NVCC, presence_test_handles=True)


# --- ROCM107: CUDA_HOME required or joined ---------------------------------------------------

_CUDA_HOME_NAMES = ("torch.utils.cpp_extension.CUDA_HOME",)


def _is_cuda_home(index, node: ast.AST) -> bool:
    if isinstance(node, (ast.Name, ast.Attribute)):
        if index.qualified_name(node) in _CUDA_HOME_NAMES:
            return True
    if isinstance(node, ast.Call) and (index.qualified_name(node.func) or "") in ("os.environ.get", "os.getenv"):
        return bool(node.args) and isinstance(node.args[0], ast.Constant) and node.args[0].value == "CUDA_HOME"
    if isinstance(node, ast.Subscript) and index.qualified_name(node.value) == "os.environ":
        return isinstance(node.slice, ast.Constant) and node.slice.value == "CUDA_HOME"
    if isinstance(node, ast.Name):
        scope = index.binding_scope(node.id, node)
        bound = index.bindings(scope).get(node.id, []) if scope is not None else []
        return bool(bound) and all(isinstance(b, ast.Assign) and _is_cuda_home(index, b.value) for b in bound)
    return False


def cuda_home_uses(source, matcher) -> Iterator[Match]:
    """`os.path.join(CUDA_HOME, ...)`, `CUDA_HOME + "/bin"`, `Path(CUDA_HOME)`,
    `f"{CUDA_HOME}/..."`, `assert CUDA_HOME`, `if CUDA_HOME is None: raise ...`: CUDA_HOME is
    None on a ROCm machine (torch.utils.cpp_extension finds ROCM_HOME instead)."""
    index = source.python_index
    seen: set[int] = set()

    def tested(node: ast.AST) -> bool:
        """Is `node` under a test of CUDA_HOME itself (`if CUDA_HOME is None: ... else: join`),
        or after an early exit taken when it is missing (`if CUDA_HOME is None: return`)?"""
        child, parent = node, index.parents.get(id(node))
        while parent is not None:
            if isinstance(parent, (ast.If, ast.IfExp, ast.While)) and child is not parent.test:
                if any(_is_cuda_home(index, sub) for sub in ast.walk(parent.test)):
                    return True
            if isinstance(child, ast.stmt) and _after_exit_on_missing(index, parent, child):
                return True
            if isinstance(parent, ast.BoolOp) and child is not parent.values[0]:
                if any(_is_cuda_home(index, sub) for v in parent.values[: parent.values.index(child)] for sub in ast.walk(v)):
                    return True
            child, parent = parent, index.parents.get(id(parent))
        return False

    def hit(node: ast.AST, anchor: ast.AST, how: str):
        if id(anchor) in seen or (how != "required" and tested(anchor)):
            return None
        seen.add(id(anchor))
        start, end = _span(source, anchor)
        return Match(start, end, gate=index.gate(anchor), captures={"HOW": Capture(how, start, end)}, node=anchor)

    for call in index.calls:
        name = index.qualified_name(call.func) or ""
        if name in ("os.path.join", "pathlib.Path", "Path", "os.path.exists", "os.path.isdir", "os.listdir") and call.args and _is_cuda_home(index, call.args[0]):
            match = hit(call.args[0], call, "joined into a path")
            if match:
                yield match
    for node in ast.walk(index.tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Div)) and _is_cuda_home(index, node.left):
            match = hit(node.left, node, "joined into a path")
        elif isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.FormattedValue) and _is_cuda_home(index, node.values[0].value):
            match = hit(node.values[0].value, node, "joined into a path")
        elif isinstance(node, ast.Assert) and _requires(index, node.test):
            match = hit(node.test, node, "required")
        elif isinstance(node, ast.If) and _missing(index, node.test) and node.body and isinstance(node.body[-1], ast.Raise):
            match = hit(node.test, node.test, "required")
        else:
            match = None
        if match:
            yield match


def _after_exit_on_missing(index, block: ast.AST, statement: ast.stmt) -> bool:
    """Does a statement before `statement` in the same block leave when CUDA_HOME is missing
    (`if CUDA_HOME is None: return ...` / `raise` / `continue` / `break`)?"""
    for field in ("body", "orelse", "finalbody"):
        statements = getattr(block, field, None)
        if not isinstance(statements, list) or not any(s is statement for s in statements):
            continue
        for earlier in statements[: next(i for i, s in enumerate(statements) if s is statement)]:
            if (isinstance(earlier, ast.If) and _missing(index, earlier.test) and earlier.body
                    and isinstance(earlier.body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))):
                return True
    return False


def _requires(index, test: ast.AST) -> bool:
    if _is_cuda_home(index, test):
        return True
    return (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot)
            and _is_cuda_home(index, test.left) and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None)


def _missing(index, test: ast.AST) -> bool:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _is_cuda_home(index, test.operand)
    return (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is)
            and _is_cuda_home(index, test.left) and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None)


# --- ROCM901: K/V heads expanded before an attention call that takes GQA as is ---------------

_ATTENTION = ("torch.nn.functional.scaled_dot_product_attention", "flash_attn.flash_attn_func",
              "flash_attn.flash_attn_varlen_func", "flash_attn.flash_attn_interface.flash_attn_func",
              "rocmlint.runtime.attention", "xformers.ops.memory_efficient_attention")


def _expands_heads(index, expr: ast.AST) -> bool:
    if not isinstance(expr, ast.Call):
        return False
    name = index.qualified_name(expr.func) or ""
    if name.rsplit(".", 1)[-1] in ("repeat_kv", "repeat_kv_heads", "expand_kv"):
        return True
    return isinstance(expr.func, ast.Attribute) and expr.func.attr == "repeat_interleave" or name == "torch.repeat_interleave"


def expanded_kv_heads(source, matcher) -> Iterator[Match]:
    """`k = repeat_kv(k, n)` / `v = v.repeat_interleave(n, dim=...)` whose result is then
    passed to SDPA, flash-attn or rocmlint.runtime.attention in the same function."""
    index = source.python_index
    for call in index.calls:
        callee = index.qualified_name(call.func) or ""
        if callee not in _ATTENTION and not callee.endswith(".scaled_dot_product_attention"):
            continue
        arguments = list(call.args[:3]) + [k.value for k in call.keywords if k.arg in ("key", "value", "k", "v")]
        for argument in arguments:
            if _expands_heads(index, argument):
                expansion = argument
            elif isinstance(argument, ast.Name):
                scope = index.binding_scope(argument.id, argument)
                bound = index.bindings(scope).get(argument.id, []) if scope is not None else []
                expansion = next((b.value for b in bound if isinstance(b, ast.Assign) and _expands_heads(index, b.value)), None)
            else:
                expansion = None
            if expansion is None:
                continue
            start, end = _span(source, expansion)
            captures = {"EXPAND": _capture(source, expansion.func), "ATTENTION": _capture(source, call.func)}
            yield Match(start, end, gate=index.gate(expansion), captures=captures, node=expansion)


# --- ROCM902: Triton launches sized for 32-thread warps --------------------------------------


def _divides_by_32(node: ast.AST) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.BinOp) and isinstance(sub.op, (ast.FloorDiv, ast.Div, ast.RShift)):
            divisor = sub.right
            if isinstance(divisor, ast.Constant) and divisor.value == (5 if isinstance(sub.op, ast.RShift) else 32):
                return True
    return False


_WARP_NAMES = ("num_warps", "nwarps", "n_warps")


def warps_from_32_thread_warps(source, matcher) -> Iterator[Match]:
    """`num_warps=BLOCK // 32`, `num_warps = threads // 32` in a module that imports Triton: a
    Triton warp is a wavefront on AMD, 64 threads on CDNA, so this asks for twice the threads
    meant."""
    index = source.python_index
    # Only Triton's num_warps: CuTe DSL and TileLang kernels count warps their own way.
    if not any(q == "triton" or q.startswith("triton.") for q in index.aliases.values()):
        return
    seen: set[int] = set()
    for call in index.calls:
        for keyword in call.keywords:
            if keyword.arg == "num_warps":
                values = [keyword.value]
                # A name the assignment rule below reports is not reported again here.
                if isinstance(keyword.value, ast.Name) and keyword.value.id.lower() not in _WARP_NAMES:
                    scope = index.binding_scope(keyword.value.id, keyword.value)
                    values += [b.value for b in (index.bindings(scope).get(keyword.value.id, []) if scope else [])
                               if isinstance(b, ast.Assign)]
                if any(_divides_by_32(v) for v in values) and id(keyword) not in seen:
                    seen.add(id(keyword))
                    start, end = _span(source, keyword)
                    yield Match(start, end, gate=index.gate(call), captures={}, node=keyword)
    for statement in index.assignments:
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        if statement.value is None:
            continue
        if any(isinstance(t, ast.Name) and t.id.lower() in _WARP_NAMES for t in targets) and _divides_by_32(statement.value):
            start, end = _span(source, statement)
            yield Match(start, end, gate=index.gate(statement), captures={}, node=statement)


# --- ROCM110: NVIDIA-only shared libraries loaded with ctypes ---------------------------------

_LIBRARY_LOADERS = frozenset({"ctypes.CDLL", "ctypes.PyDLL", "ctypes.cdll.LoadLibrary", "ctypes.CDLL.LoadLibrary",
                              "ctypes.WinDLL", "ctypes.windll.LoadLibrary", "ctypes.pydll.LoadLibrary"})
_LIBRARY_LOADER_TAILS = frozenset(name.rsplit(".", 1)[-1] for name in _LIBRARY_LOADERS)
# The NVIDIA libraries a ROCm machine does not have, by the name a loader is given: the CUDA
# runtime and driver, NVML, NVRTC, the CUDA math libraries, cuDNN, NCCL, CUPTI and NVTX. Their
# ROCm counterparts have other names (libamdhip64, amdsmi/librocm_smi64, libhiprtc, librccl, ...).
_NVIDIA_LIBRARY = re.compile(
    r"(?:^|[/\\])(?:lib)?(?P<library>cudart|cuda|nvidia-ml|nvml|nvrtc|cublasLt|cublas|cudnn|nccl|cufft|curand|"
    r"cusparse|cusolver|cupti|nvToolsExt|nvJitLink|nvjitlink)(?:64_\w+|\d*)?(?:\.so[.\d]*|\.dll|\.dylib)?$"
)
_LOAD_FAILURES = ("OSError", "FileNotFoundError", "Exception", "BaseException")


def _caught_by(index, node: ast.AST, kinds: tuple[str, ...]) -> str | None:
    """Why `node` sits in the body of a `try` (same function) with a handler for one of
    `kinds` (or a bare `except:`), or None."""
    child, parent = node, index.parents.get(id(node))
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        if isinstance(parent, ast.Try) and any(child is s for s in parent.body):
            for handler in parent.handlers:
                caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
                for kind in caught:
                    name = None if kind is None else kind.id if isinstance(kind, ast.Name) else getattr(kind, "attr", "?")
                    if name is None or name in kinds:
                        return f"inside `try:` that catches {name or 'everything'} (line {parent.lineno})"
        child, parent = parent, index.parents.get(id(parent))
    return None


# Tests that a path names an existing file: `os.path.exists(p)`, `os.path.isfile(p)`,
# `os.path.lexists(p)` (and `pathlib.Path(p).exists()` / `.is_file()`, read apart).
_FILE_TESTS = frozenset({"os.path.exists", "os.path.isfile", "os.path.lexists"})


def _tests_file_exists(index, test: ast.AST, path: ast.AST) -> bool:
    """Whether `test` (an `if` condition, or one operand of its `and`) asks whether the file
    `path` names exists: the same expression, written again, as the argument of a file test."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_tests_file_exists(index, value, path) for value in test.values)
    if not isinstance(test, ast.Call):
        return False
    wanted = ast.dump(path)
    func = test.func
    if isinstance(func, ast.Attribute) and func.attr in ("exists", "is_file") and not test.args:
        # Path(p).exists(): the path is the argument of the object the method is called on.
        owner = func.value
        return (isinstance(owner, ast.Call) and (index.qualified_name(owner.func) or "") in ("pathlib.Path", "Path")
                and len(owner.args) == 1 and ast.dump(owner.args[0]) == wanted)
    name = index.qualified_name(func) or ""
    return name in _FILE_TESTS and len(test.args) == 1 and ast.dump(test.args[0]) == wanted


def _loaded_only_if_present(index, call: ast.Call) -> str | None:
    """Why a load cannot fail for want of the file: it sits in the body of an `if` (same
    function) that first asked whether the file it loads exists; or None."""
    child, parent = call, index.parents.get(id(call))
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        if isinstance(parent, ast.If):
            test, branch = parent.test, parent.body
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                test, branch = test.operand, parent.orelse  # `if not exists(p): ... else: load(p)`
            if any(child is s for s in branch) and _tests_file_exists(index, test, call.args[0]):
                return f"loaded only if the file exists (the test on line {parent.lineno})"
        child, parent = parent, index.parents.get(id(parent))
    return None


def nvidia_library_loads(source, matcher) -> Iterator[Match]:
    index = source.python_index
    for call in index.calls:
        if not call.args or not may_name(call.func, _LIBRARY_LOADER_TAILS):
            continue
        if (index.qualified_name(call.func) or "") not in _LIBRARY_LOADERS:
            continue
        for value in index.values(call.args[0]):
            if not isinstance(value.literal, str):
                continue
            found = _NVIDIA_LIBRARY.search(value.literal.strip())
            if found is None:
                continue
            start, end = _span(source, call)
            when = "at import time" if index.at_module_level(call) else "when this runs"
            captures = {"LIBRARY": Capture(found.group(0).lstrip("/\\"), start, end), "WHEN": Capture(when, start, end),
                        "CALLEE": _capture(source, call.func)}
            gate = (index.gate(call) or value.gate or _caught_by(index, call, _LOAD_FAILURES)
                    or _loaded_only_if_present(index, call))
            yield Match(start, end, gate=gate, captures=captures, node=call)
            break


# --- ROCM112: cuDNN attention chosen as the only SDPA backend ---------------------------------

_SDPA_CHOOSERS = frozenset({"torch.nn.attention.sdpa_kernel", "torch.backends.cuda.sdp_kernel"})
_SDPA_CHOOSER_TAILS = frozenset({"sdpa_kernel", "sdp_kernel"})
_CUDNN_BACKEND = "SDPBackend.CUDNN_ATTENTION"
# aten's cuDNN attention ops: stubs that raise on ROCm builds (aten/src/ATen/native/cudnn/MHA.cpp).
_CUDNN_ATTENTION_OPS = frozenset({
    "torch.ops.aten._scaled_dot_product_cudnn_attention", "torch.ops.aten._scaled_dot_product_cudnn_attention_backward",
    "torch.ops.aten._cudnn_attention_forward", "torch.ops.aten._cudnn_attention_backward",
    "torch._scaled_dot_product_cudnn_attention",
})
_CUDNN_ATTENTION_OP_TAILS = frozenset(n.rsplit(".", 1)[-1] for n in _CUDNN_ATTENTION_OPS) | {"default"}
_SDP_SWITCHES = ("enable_flash", "enable_math", "enable_mem_efficient")


def _only_cudnn(index, expr: ast.AST) -> ast.AST | None:
    """The node that makes `expr` name cuDNN attention alone (`SDPBackend.CUDNN_ATTENTION`, or a
    list or tuple of nothing else), through the module's values, or None."""
    for value in index.values(expr):
        node = value.node
        if value.gate is not None:
            continue
        elements = list(node.elts) if isinstance(node, (ast.List, ast.Tuple, ast.Set)) else [node]
        if elements and all((index.qualified_name(e) or "").endswith(_CUDNN_BACKEND) for e in elements):
            return node
    return None


def cudnn_only_attention(source, matcher) -> Iterator[Match]:
    index = source.python_index
    for call in index.calls:
        func = call.func
        how = None
        if may_name(func, _SDPA_CHOOSER_TAILS) and (index.qualified_name(func) or "") in _SDPA_CHOOSERS:
            if (index.qualified_name(func) or "").endswith("sdp_kernel"):
                # The deprecated torch.backends.cuda.sdp_kernel(enable_flash=False, ...): every
                # other backend switched off, cuDNN left on.
                given = {k.arg: k.value for k in call.keywords if k.arg}
                if all(isinstance(given.get(s), ast.Constant) and given[s].value is False for s in _SDP_SWITCHES):
                    how = "switches every SDPA backend off but cuDNN"
            else:
                backends = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "backends"), None)
                if backends is not None and _only_cudnn(index, backends) is not None:
                    how = "allows SDPA no backend but cuDNN attention"
        elif may_name(func, _CUDNN_ATTENTION_OP_TAILS):
            name = index.qualified_name(func) or ""
            if name.endswith(".default"):
                name = name[: -len(".default")]
            if name in _CUDNN_ATTENTION_OPS:
                how = "calls aten's cuDNN attention op directly"
        if how is None:
            continue
        start, end = _span(source, call)
        captures = {"CALLEE": _capture(source, func), "HOW": Capture(how, start, end)}
        yield Match(start, end, gate=index.gate(call) or _cudnn_path(index, call), captures=captures, node=call)


def _cudnn_path(index, node: ast.AST) -> str | None:
    """Why `node` is the cuDNN backend's own path, chosen on purpose: inside a function or class
    named for cuDNN (diffusers' `_native_cudnn_attention`, a registered `_cudnn_attn_call`), or
    under an `if` whose test asks whether cuDNN attention was chosen (`if use_cudnn:`,
    `elif backend == SDPBackend.CUDNN_ATTENTION:`), which it never is on ROCm."""
    child, parent = node, index.parents.get(id(node))
    while parent is not None:
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and "cudnn" in parent.name.lower():
            kind = "class" if isinstance(parent, ast.ClassDef) else "function"
            return f"in {kind} `{parent.name}`, the cuDNN backend's own path (line {parent.lineno})"
        if isinstance(parent, ast.If) and child is not parent.test and any(child is s for s in parent.body):
            if "cudnn" in ast.unparse(parent.test).lower():
                return f"under `if {ast.unparse(parent.test)[:60]}` (line {parent.lineno}): only where cuDNN attention was chosen"
        child, parent = parent, index.parents.get(id(parent))
    return None


# --- ROCM013: AMD's aiter reached at import time by code NVIDIA runs ---------------------------

AITER_OPS = "torch.ops.aiter"


def _project_provides(path: str | None, package: str) -> bool:
    """Does the project the file belongs to (the nearest folder above it with a setup.py or
    pyproject.toml) ship `package` itself (`<root>/aiter/`, `<root>/src/aiter/`)? Its tools and
    tests import it as their own."""
    import os

    if not path:
        return False
    directory = os.path.dirname(os.path.abspath(path))
    while True:
        if any(os.path.isfile(os.path.join(directory, n)) for n in ("setup.py", "pyproject.toml")):
            return any(os.path.isfile(os.path.join(directory, *where, package, "__init__.py")) for where in ((), ("src",)))
        parent = os.path.dirname(directory)
        if parent == directory:
            return False
        directory = parent


def aiter_at_import_time(source, matcher) -> Iterator[Match]:
    """`import aiter` / `from aiter... import` / `importlib.import_module("aiter...")` and
    `torch.ops.aiter.*` uses that run when the module is imported, outside `try`/`except` and
    platform tests. Whether NVIDIA imports the module is the project pass's question
    (rocmlint.project.python_imports); the module's name is never taken as an answer."""
    from rocmlint.python.gates import own_module

    index = source.python_index
    hits: list[tuple[ast.AST, str]] = []
    for node in index.imports:
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name == "aiter" or a.name.startswith("aiter.")]
        else:
            names = [node.module] if node.level == 0 and node.module and (node.module == "aiter" or node.module.startswith("aiter.")) else []
        if names:
            hits.append((node, names[0]))
    for call in index.calls:
        if call.args and may_name(call.func, ("import_module",)) and index.qualified_name(call.func) == "importlib.import_module":
            first = call.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.split(".")[0] == "aiter":
                hits.append((call, first.value))
    for node in index.attributes:
        if isinstance(index.parents.get(id(node)), ast.Attribute):
            continue  # only the whole dotted name
        name = index.qualified_name(node) or ""
        if name.startswith(AITER_OPS + "."):
            hits.append((node, name))
    if hits and (own_module(source.path, "aiter") or _project_provides(source.path, "aiter")):
        return  # aiter's own code
    for node, name in hits:
        if not index.at_module_level(node):
            continue
        start, end = _span(source, node)
        gate = index.gate(node, import_guard=True, by_module_name=False) or _under_aiter_test(index, node)
        yield Match(start, end, gate=gate, captures={"MODULE": Capture(name, start, end)}, node=node)


def _under_aiter_test(index, node: ast.AST) -> str | None:
    """Why `node` runs only where aiter was found: in the body of an `if` whose test asks about
    aiter (`if HAS_AITER:`, `if env_info["has_aiter"]:`, `if _use_aiter:`)."""
    child, parent = node, index.parents.get(id(node))
    while parent is not None:
        if isinstance(parent, ast.If) and any(child is s for s in parent.body) and "aiter" in ast.unparse(parent.test).lower():
            return f"under `if {ast.unparse(parent.test)[:60]}` (line {parent.lineno}): only where aiter is available"
        child, parent = parent, index.parents.get(id(parent))
    return None
