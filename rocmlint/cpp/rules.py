"""C/C++ checks that a tree pattern cannot say, as `function` matchers.

Each function takes the SourceFile and its FunctionMatcher and yields Matches; gates come from
the file's preprocessor structure like the other matchers' (the matcher's `check_amd_side`
says whether the AMD side of a stack test is read).
"""

from __future__ import annotations

import ast
import re
from typing import Iterator

from rocmlint.findings import excerpt
from rocmlint.matchers import Capture, Match
from rocmlint.cpp.wave import keeps_to_32_lane_groups
from rocmlint.cpp.preprocessor import MacroFact, MacroTable, condition_names_platform, condition_value, scan_directives

# --- ROCM206: __CUDA_ARCH__ feature gates ------------------------------------------------------

_CUDA_ARCH = re.compile(r"\b__CUDA_ARCH__\b")
# A condition that also asks about the HIP device pass or an AMD target covers AMD already.
_HIP_DEVICE = re.compile(r"\b(__HIP_DEVICE_COMPILE__|__AMDGCN__|__gfx\w+__|__GFX\d+__)\b")


def _asks_about_amd(condition: str) -> bool:
    """Does a condition test a GPU stack macro, the HIP device pass or an AMD target?"""
    return condition_names_platform(condition) or bool(_HIP_DEVICE.search(condition))


# The device passes of current NVIDIA data-centre GPUs (Ampere, Hopper, Blackwell): what the
# code's authors tested. A condition HIP reads differently from every one of them sends AMD
# down a path only the host pass or an older GPU takes.
_NVIDIA_DEVICE_PASSES = tuple(
    MacroTable({"__CUDA_ARCH__": MacroFact(True, arch), "__CUDACC__": MacroFact(True, 1), "__NVCC__": MacroFact(True, 1)})
    for arch in (800, 900, 1000)
)


def cuda_arch_feature_gates(source, matcher) -> Iterator[Match]:
    """`#if __CUDA_ARCH__ >= 800`, `#ifdef __CUDA_ARCH__`, `#ifndef __CUDA_ARCH__`: HIP-Clang
    never defines __CUDA_ARCH__, so an AMD build compiles what no current NVIDIA GPU's device
    pass compiles. Conditions HIP reads as a current NVIDIA GPU does (`defined(__CUDA_ARCH__)
    && __CUDA_ARCH__ < 800`, a fallback for old GPUs) are left alone."""
    if source.path.lower().endswith(_HOST_ONLY_SUFFIXES):
        return  # a host compiler builds it: __CUDA_ARCH__ is undefined for NVIDIA as for AMD
    gates = source.preprocessor_gates
    directives = scan_directives(source.text)
    for index, directive in enumerate(directives):
        if directive.keyword not in ("if", "elif", "ifdef", "ifndef", "elifdef", "elifndef"):
            continue
        if not _CUDA_ARCH.search(directive.text):
            continue
        if _asks_about_amd(directive.text):
            continue
        on_hip, _ = condition_value(directive.keyword, directive.text)
        if on_hip is None:
            continue
        if any(bool(condition_value(directive.keyword, directive.text, nvidia)[0]) == bool(on_hip)
               for nvidia in _NVIDIA_DEVICE_PASSES if condition_value(directive.keyword, directive.text, nvidia)[0] is not None):
            continue
        if _nvidia_branch_is_nvidia_only(source, directives, index, taken_on_hip=bool(on_hip)):
            continue  # AMD could not use that branch anyway: the other one is its port
        if _later_branch_for_amd(directives, index):
            continue  # `#if defined(__CUDA_ARCH__)` ... `#elif defined(__HIPCC__)`: AMD has its own
        start = source.line_starts[directive.line - 1]
        line_text = source.line_text(directive.line)
        end = start + len(line_text.rstrip())
        text = f"#{directive.keyword} {directive.text}"
        yield Match(
            start,
            end,
            gate=gates.reason(directive.line, matcher.check_amd_side),
            captures={"DIRECTIVE": Capture(excerpt(text), start, end)},
        )


_HOST_ONLY_SUFFIXES = (".cpp", ".cc", ".cxx", ".c")
_NVIDIA_ONLY_CODE = re.compile(r"#\s*include\s*[<\"](?:cutlass|cute)/|\b(?:cute|cutlass)::|\bwgmma\b|\btcgen05\b")


def _branch_body(source, directives, index: int) -> tuple[str, int | None]:
    """The text of the branch opened at `index`, and the index of the directive that ends it."""
    end = _branch_end(directives, index)
    end_line = directives[end].line if end is not None else len(source.lines) + 1
    return "\n".join(source.lines[directives[index].last_line : end_line - 1]), end


# Statements that only stop the program: a branch of nothing else is no port, it is a failure.
_FAILURE_STATEMENT = re.compile(
    r"^(?:assert\s*\(.*\bfalse\b.*\)|static_assert\s*\(\s*(?:false|0)\b.*\)|__trap\s*\(\s*\)|(?:std::)?abort\s*\(\s*\)"
    r"|TORCH_CHECK\s*\(\s*false\b.*\)|#\s*error\b.*)$",
    re.S,
)


def _only_fails(body: str) -> bool:
    """Is a branch nothing but `assert(false)`, `#error`, `__trap()` and the like?"""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", body, flags=re.S)
    parts = [p.strip() for p in re.split(r";|\n(?=\s*#)", text) if p.strip()]
    return bool(parts) and all(_FAILURE_STATEMENT.match(" ".join(p.split())) for p in parts)


def _nvidia_branch_is_nvidia_only(source, directives, index: int, taken_on_hip: bool) -> bool:
    """Does the branch that NVIDIA's device pass takes here (and AMD does not) hold only code
    AMD could never compile (inline PTX, CUTLASS/CuTe), while the branch AMD takes does real
    work? Then AMD taking the other branch is the port, not a slip. A branch for AMD that only
    fails (`assert(false)`, `#error`) is no port."""
    this_body, chain_end = _branch_body(source, directives, index)
    if taken_on_hip:
        # NVIDIA takes a later branch: the one after this directive's branch
        if chain_end is None or directives[chain_end].keyword == "endif":
            return False
        amd_body = this_body
        body, _ = _branch_body(source, directives, chain_end)
    else:
        body = this_body
        has_next = chain_end is not None and directives[chain_end].keyword != "endif"
        amd_body = _branch_body(source, directives, chain_end)[0] if has_next else ""
    if not body.strip():
        return False
    if _only_fails(amd_body):
        return False
    if re.search(r"\b(?:asm|__asm__)\b", body):
        templates = "\n".join(re.findall(r'"((?:[^"\\\n]|\\.)*)"', body))
        if ptx_evidence(templates):
            return True
    return bool(_NVIDIA_ONLY_CODE.search(body))


def _later_branch_for_amd(directives, index: int) -> bool:
    """Does a later `#elif` of the chain at `index` test a GPU stack macro or the HIP device pass?"""
    position = _branch_end(directives, index)
    while position is not None and directives[position].keyword in ("elif", "elifdef", "elifndef"):
        if _asks_about_amd(directives[position].text):
            return True
        position = _branch_end(directives, position)
    return False


def _branch_end(directives, index: int) -> int | None:
    """Index of the #elif/#else/#endif that ends the branch opened at `index`."""
    depth = 0
    for j in range(index + 1, len(directives)):
        keyword = directives[j].keyword
        if keyword in ("if", "ifdef", "ifndef"):
            depth += 1
        elif keyword == "endif":
            if depth == 0:
                return j
            depth -= 1
        elif keyword in ("elif", "else", "elifdef", "elifndef") and depth == 0:
            return j
    return None


# --- ROCM209: shared memory over 64 KiB --------------------------------------------------------

# Bytes of the element types shared-memory arrays are declared with.
_TYPE_BYTES = {
    "char": 1, "signed char": 1, "unsigned char": 1, "int8_t": 1, "uint8_t": 1, "bool": 1, "__nv_fp8_e4m3": 1,
    "__nv_fp8_e5m2": 1, "short": 2, "unsigned short": 2, "int16_t": 2, "uint16_t": 2, "half": 2, "__half": 2,
    "at::Half": 2, "c10::Half": 2, "__nv_bfloat16": 2, "nv_bfloat16": 2, "bfloat16": 2, "at::BFloat16": 2,
    "c10::BFloat16": 2, "__hip_bfloat16": 2, "half2": 4, "__half2": 4, "__nv_bfloat162": 4, "int": 4,
    "unsigned": 4, "unsigned int": 4, "int32_t": 4, "uint32_t": 4, "float": 4, "char4": 4, "uchar4": 4,
    "long long": 8, "unsigned long long": 8, "int64_t": 8, "uint64_t": 8, "double": 8, "float2": 8, "int2": 8,
    "uint2": 8, "size_t": 8, "float4": 16, "int4": 16, "uint4": 16, "double2": 16, "double4": 32,
}
_SHARED_ARRAY = re.compile(
    r"__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s+|alignas\s*\(\s*\d+\s*\)\s+|static\s+|volatile\s+)*"
    r"(?P<type>(?:unsigned\s+|signed\s+)?(?:long\s+long|[A-Za-z_][\w:]*))\s+"
    r"(?P<name>[A-Za-z_]\w*)\s*(?P<dims>(?:\[[^\]\[]+\]\s*)+)"
)
_DYNAMIC_ATTRIBUTE = re.compile(
    r"\b(?:cudaFuncSetAttribute|hipFuncSetAttribute)\s*\([^;]*?(?:cudaFuncAttributeMaxDynamicSharedMemorySize|"
    r"hipFuncAttributeMaxDynamicSharedMemorySize)\s*,\s*(?P<size>[^;]+?)\)\s*;",
    re.S,
)
_DEFINE_INT = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+\(?\s*([0-9][0-9xXa-fA-F']*)[uUlL]*\s*\)?[ \t]*$", re.M)
_CONST_INT = re.compile(r"\b(?:constexpr|const)\s+(?:static\s+)?(?:unsigned\s+)?(?:int|size_t|unsigned|int32_t|uint32_t|int64_t)\s+([A-Za-z_]\w*)\s*=\s*([0-9][0-9']*)[uUlL]*\s*;")
LDS_LIMIT = 64 * 1024


def _integer(expression: str, names: dict[str, int]) -> int | None:
    """A size expression of integer literals, known names, `*`, `+`, `-`, `/`, `<<`, `sizeof`."""
    expression = re.sub(r"sizeof\s*\(\s*([^()]+?)\s*\)", lambda m: str(_TYPE_BYTES.get(m.group(1).strip(), -1)), expression)
    if "-1" in expression and re.search(r"(?<![\w)])-1\b", expression):
        return None
    tokens = re.findall(r"0[xX][0-9a-fA-F]+|\d+|[A-Za-z_]\w*|<<|>>|[-+*/()]", expression)
    if "".join(tokens) != re.sub(r"\s+|[uUlL](?=\W|$)|'", "", expression):
        return None
    parts = []
    for token in tokens:
        if token[0].isalpha() or token[0] == "_":
            if token not in names:
                return None
            parts.append(str(names[token]))
        elif token[0].isdigit():
            value = _c_integer(token)
            if value is None:
                return None  # not a C integer literal (`09`): the size is unknown
            parts.append(str(value))
        else:
            parts.append(token)
    try:
        tree = ast.parse(" ".join(parts), mode="eval")
    except SyntaxError:
        return None
    return _arithmetic(tree.body)


def _c_integer(token: str) -> int | None:
    """A C integer literal's value: `0x1F`, `017` (octal), `42`; None for `09` and the like."""
    try:
        if token[:2].lower() == "0x":
            return int(token, 16)
        return int(token, 8) if len(token) > 1 and token[0] == "0" else int(token)
    except ValueError:
        return None


_OPERATIONS = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a // b if b else None, ast.LShift: lambda a, b: a << b if 0 <= b < 64 else None,
    ast.RShift: lambda a, b: a >> b if 0 <= b < 64 else None,
}


def _arithmetic(node: ast.AST) -> int | None:
    """Integer arithmetic on literals only (the expression was built from C integer tokens)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATIONS:
        left, right = _arithmetic(node.left), _arithmetic(node.right)
        if left is None or right is None:
            return None
        return _OPERATIONS[type(node.op)](left, right)
    return None


_DEFAULT_LDS_TEXT = "AMD GPUs give a workgroup at most 64 KiB of LDS (MI100, MI200, MI300 and RDNA; 160 KiB on MI350/MI355X, gfx950)"


def _lds_limit(source) -> tuple[int, str]:
    """(bytes, words) of the LDS a workgroup has: on the configured GPUs (`arch`), else 64 KiB."""
    archs = source.target.archs if source.target is not None else ()
    if not archs:
        return LDS_LIMIT, _DEFAULT_LDS_TEXT
    from rocmlint.catalog.arch_facts import arch_facts

    sizes = {arch: arch_facts(arch).lds_kib for arch in archs}
    limit = min(sizes.values())
    listed = ", ".join(f"{arch}: {kib} KiB" for arch, kib in sizes.items())
    return limit * 1024, f"the configured GPUs give a workgroup at most {limit} KiB of LDS ({listed})"


def shared_memory_over_64k(source, matcher) -> Iterator[Match]:
    """Static `__shared__` arrays, and opted-in dynamic shared memory, above the LDS a workgroup
    has: 64 KiB unless the configured GPUs (`arch`) all have more."""
    text = source.text
    limit, limit_text = _lds_limit(source)
    names: dict[str, int] = {}
    for pattern in (_DEFINE_INT, _CONST_INT):
        for match in pattern.finditer(text):
            value = _integer(match.group(2), {})
            if value is not None:
                names.setdefault(match.group(1), value)
    gates = source.preprocessor_gates
    literal_free = _code_only(source)
    for match in _SHARED_ARRAY.finditer(literal_free):
        element = _TYPE_BYTES.get(" ".join(match.group("type").split()))
        if element is None:
            continue
        size = element
        for dimension in re.findall(r"\[([^\]\[]+)\]", match.group("dims")):
            value = _integer(dimension, names)
            if value is None:
                size = None
                break
            size *= value
        if size is None or size <= limit:
            continue
        yield _size_match(source, gates, matcher, match.start(), match.end(), size, limit_text)
    for match in _DYNAMIC_ATTRIBUTE.finditer(literal_free):
        size = _integer(match.group("size"), names)
        if size is not None and size > limit:
            yield _size_match(source, gates, matcher, match.start(), match.end(), size, limit_text)


def _size_match(source, gates, matcher, start: int, end: int, size: int, limit_text: str) -> Match:
    line, _ = source.position(start)
    kib = f"{size / 1024:g} KiB"
    captures = {"SIZE": Capture(kib, start, end), "LIMIT": Capture(limit_text, start, end)}
    return Match(start, end, gate=gates.reason(line, matcher.check_amd_side), captures=captures)


def _code_only(source) -> str:
    """The file with comments and string literals blanked (same offsets), read once per file."""
    return source.code_only


# --- ROCM215: per-lane arrays sized 32 ----------------------------------------------------------

# An array declaration statement: qualifiers, an element type, the name, then its dimensions.
_ARRAY_DECLARATION = re.compile(
    r"^[ \t]*(?:(?:__shared__|static|volatile|const|constexpr|__align__\s*\(\s*\d+\s*\)|alignas\s*\(\s*\d+\s*\))\s+)*"
    r"(?:unsigned\s+|signed\s+)?[A-Za-z_][\w:]*(?:\s*<[^;<>]*>)?\s+"
    r"(?P<name>[A-Za-z_]\w*)\s*(?P<dims>(?:\[[^\]\[;]+\]\s*)+)\s*(?:;|=|\{)",
    re.M,
)
_DIMENSION_32 = re.compile(r"\[\s*32[uU]?\s*\]")
# Index expressions that name a lane of the warp (`tid & 31` is bounded to 32 and is not one).
_LANE_INDEX = re.compile(r"^\s*(?:lane|lane_id|laneId|laneid|lane_idx|lane_index|laneIdx|__lane_id\s*\(\s*\))\s*$")


def lane_arrays_sized_32(source, matcher) -> Iterator[Match]:
    """Arrays with a dimension of 32 that the file indexes by lane in that dimension, where the
    code also works with the whole wavefront (rocmlint.cpp.wave: the lane number reaches 63 on a
    64-lane wavefront); a lane bounded to 32-lane groups (`tid & 31`) indexes within it."""
    text = _code_only(source)
    gates = source.preprocessor_gates
    declared: dict[str, tuple[int, int, list[int]]] = {}
    # Only lines with a dimension of 32 can declare one: the declaration is read from their starts.
    line_starts = sorted({text.rfind("\n", 0, hit.start()) + 1 for hit in _DIMENSION_32.finditer(text)})
    for line_start in line_starts:
        match = _ARRAY_DECLARATION.match(text, line_start)
        if match is None:
            continue
        dimensions = re.findall(r"\[([^\]\[;]+)\]", match.group("dims"))
        sized_32 = [i for i, d in enumerate(dimensions) if re.fullmatch(r"\s*32[uU]?\s*", d)]
        if sized_32:
            name_start = match.start("name")
            declared.setdefault(match.group("name"), (name_start, match.end("dims"), sized_32))
    if not declared:
        return
    use = re.compile(r"\b(" + "|".join(map(re.escape, declared)) + r")\s*((?:\[[^\]\[;]*(?:\[[^\]\[;]*\][^\]\[;]*)*\]\s*)+)")
    flagged: set[str] = set()
    for match in use.finditer(text):
        name = match.group(1)
        start, end, sized_32 = declared[name]
        if name in flagged or match.start() == start:
            continue
        subscripts = _subscripts(match.group(2))
        if not any(i < len(subscripts) and _LANE_INDEX.match(subscripts[i]) for i in sized_32):
            continue
        if _bounded_to_32(text, match.start(), subscripts):
            continue
        site = source.wave_context.at(match.start())
        flagged.add(name)
        line, _ = source.position(start)
        gate = gates.reason(line, matcher.check_amd_side)
        captures = {"NAME": Capture(name, start, start + len(name))}
        if site is None:
            # Lanes of a 32-lane group index it whole: reported where the project has no AMD side.
            yield Match(start, end, gate=keeps_to_32_lane_groups(gate), captures=captures, variant="no-wave-site")
            continue
        captures["WAVE"] = Capture(site.describe(), start, end)
        yield Match(start, end, gate=gate, captures=captures)


def _bounded_to_32(text: str, use: int, subscripts: list[str]) -> bool:
    """Is the lane variable used as the index assigned a value bounded to 32 (`tid & 31`,
    `tid % 32`) before this use?"""
    before = text[max(0, use - 4000) : use]
    for subscript in subscripts:
        name = subscript.strip()
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            continue
        assignments = re.findall(rf"\b{re.escape(name)}\s*=\s*([^;=][^;]*);", before)
        if assignments and re.search(r"&\s*(?:31|0[xX]1[fF])\b|%\s*32\b", assignments[-1]):
            return True
    return False


def _subscripts(text: str) -> list[str]:
    """`[a][b[c]]` -> ["a", "b[c]"] (one level of nesting)."""
    parts, depth, current = [], 0, ""
    for char in text:
        if char == "[":
            depth += 1
            if depth == 1:
                current = ""
                continue
        elif char == "]":
            depth -= 1
            if depth == 0:
                parts.append(current)
                continue
        if depth >= 1:
            current += char
    return parts


# --- ROCM004: inline PTX, decided by the assembly's grammar ---------------------------------------

_ASM_KEYWORD = re.compile(r"\b(asm|__asm__|__asm)\b(?:\s*(?:volatile|__volatile__|goto|inline)\b)*\s*\(")
# PTX opcodes (PTX ISA 8.x "Instructions"). A dotted opcode counts as PTX only when its base is
# one of these and one of its suffixes is PTX vocabulary, which RISC-V (`fcvt.s.w`, `add.uw`,
# `fence.i`), MIPS (`cvt.s.w`, `mov.d`) and Arm (`b.eq`) mnemonics never are; GCN/RDNA
# (`v_add_f32`, `s_waitcnt`, `buffer_load_dword`) and x86 mnemonics have no dots at all.
_PTX_OPCODES = frozenset("""
    abs activemask add addc alloca and applypriority atom bar barrier bfe bfi bfind bmsk bra brev
    brkpt brx call clusterlaunchcontrol clz cnot copysign cos cp createpolicy cvt cvta discard div
    dp2a dp4a elect ex2 exit fence fma fns getctarank griddepcontrol isspacep istypeof ld ldmatrix
    ldu lg2 lop3 mad mad24 madc mapa match max mbarrier membar min mma mov movmatrix mul mul24
    multimem nanosleep neg not or pmevent popc prefetch prefetchu prmt rcp red redux rem ret rsqrt
    sad selp set setmaxnreg setp shf shfl shl shr sin slct sqrt st stackrestore stacksave stmatrix
    sub subc suld suq sured sust szext tanh tcgen05 tensormap testp tex tld4 trap txq vabsdiff vadd
    vmad vmax vmin vote vset vshl vshr vsub wgmma wmma xor
""".split())
_PTX_SUFFIXES = frozenset("""
    u8 u16 u32 u64 s8 s16 s32 s64 b1 b4 b8 b16 b32 b64 b128 f16 f16x2 bf16 bf16x2 f32 f64 tf32
    e4m3 e5m2 e4m3x2 e5m2x2 e2m1 e2m1x2 e2m3 e3m2 ue8m0 u4 s4 pred global shared local const
    param generic cta gpu sys cluster relaxed acquire release acq_rel sc weak volatile mmio sync
    aligned approx ftz sat satfinite rn rz rm rp rni rzi rmi rpi full NaN xorsign relu gl nc v2 v4
    v8 x1 x2 x4 trans arrive wait red commit_group wait_group wait_all wait_group_read ca cg cs lu
    cv wb wt idx up down bfly any all ballot uni hi lo wide cc lt le gt ge eq ne equ neu ltu leu
    gtu geu num nan proxy async bulk tensor tile im2col expect_tx complete_tx try_wait test_wait
    arrive_drop noinc inc dec exch cas popc collective row col m8n8 m16n8k8 m16n8k16 m16n8k32
    m16n8k64 m16n8k256 m64n8k16 shiftl shiftr clamp wrap mode warpgroup fence_proxy_async
    L1 L2 evict_normal evict_first evict_last no_allocate 64B 128B 256B
""".split())
_PTX_SPECIAL = re.compile(
    r"%%?(?:laneid|warpid|nwarpid|smid|nsmid|gridid|clock|clock64|clock_hi|globaltimer|globaltimer_lo|"
    r"globaltimer_hi|lanemask_(?:eq|le|lt|ge|gt)|ntid|nctaid|ctaid|cluster\w*|dynamic_smem_size|total_smem_size|"
    r"aggr_smem_size|reserved_smem\w*|envreg\d+|pm\d+)\b"
)
_PTX_DECLARATION = re.compile(r"(?:^|[;{\s])(\.(?:reg|shared|local|param)\s+\.[a-z]\w*)")
_PTX_BARE = re.compile(r"(?:^|[;{}\s])(?:trap|exit|brkpt|pmevent)\s*(?:;|$)")
_INSTRUCTION = re.compile(r"(?:^|[;{}\n]|\)\s*)\s*(?:@!?%?\w+\s+)?(?:[A-Za-z_$][\w$]*:\s*)?([a-z][a-z0-9_]*)((?:\.[A-Za-z0-9_:]+)+)")


def ptx_evidence(template: str) -> str | None:
    """What marks an inline assembly template as PTX (an opcode, a special register, a `.reg`
    declaration), or None for other assembly (GCN/RDNA, x86, Arm, RISC-V) and empty barriers."""
    for match in _INSTRUCTION.finditer(template):
        base, suffixes = match.group(1), match.group(2)
        if base in _PTX_OPCODES and any(part.split("::")[0] in _PTX_SUFFIXES for part in suffixes[1:].split(".")):
            return base + suffixes
    special = _PTX_SPECIAL.search(template)
    if special:
        return special.group(0)
    declaration = _PTX_DECLARATION.search(template)
    if declaration:
        return declaration.group(1)
    bare = _PTX_BARE.search(template)
    return bare.group(0).strip(" ;{}") if bare else None


def _literal_text(literal: str) -> str:
    """The characters of a C string literal (prefixes dropped, common escapes decoded)."""
    raw = re.match(r'^(?:u8|u|U|L)?R"([^(]*)\((.*)\)\1"$', literal, re.S)
    if raw:
        return raw.group(2)
    body = re.sub(r'^(?:u8|u|U|L)?"', "", literal)
    body = body[:-1] if body.endswith('"') else body
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


def inline_ptx_asm(source, matcher) -> Iterator[Match]:
    """GNU inline assembly whose template is PTX. The template's string literals are read up to
    the first `:` (preprocessor lines inside the statement skipped, so `#if` inside `asm(...)`
    works); a statement inside a `#define` is reported at the `#define`."""
    text = source.text
    spans = source.literal_spans
    code_only = source.code_only
    literals = [(s, e) for s, e, is_comment in spans if not is_comment]
    directives = source.directives
    directive_lines: dict[int, object] = {}
    for directive in directives:
        for line in range(directive.line, directive.last_line + 1):
            directive_lines[line] = directive
    gates = source.preprocessor_gates
    reported_defines: set[int] = set()
    for keyword in _ASM_KEYWORD.finditer(code_only):
        open_paren = keyword.end() - 1
        close = _matching_paren(code_only, open_paren)
        colon = code_only.find(":", open_paren, close)
        template_end = close if colon < 0 else colon
        keyword_line, _ = source.position(keyword.start())
        macro = directive_lines.get(keyword_line)
        in_define = macro is not None and macro.keyword == "define"
        pieces: list[tuple[int, str]] = []
        skipped_directive = False
        for start, end in literals:
            if start < open_paren or start >= template_end:
                continue
            line, _ = source.position(start)
            if not in_define and line in directive_lines:
                continue
            if pieces and not in_define:
                # literals on either side of an `#if` line are alternatives, not one string
                skipped_directive = any(n in directive_lines for n in range(pieces[-1][0] + 1, line))
            piece = _literal_text(text[start:end])
            pieces.append((line, ("\n" + piece) if skipped_directive else piece))
        evidence = ptx_evidence("".join(piece for _, piece in pieces))
        if evidence is None:
            continue
        if in_define:
            if macro.line in reported_defines:
                continue
            reported_defines.add(macro.line)
            name = re.match(r"\s*([A-Za-z_]\w*)", macro.text)
            start = source.line_starts[macro.line - 1]
            end = start + len(source.line_text(macro.line).rstrip())
            word = name.group(1) if name else keyword.group(1)
            yield Match(start, end, gate=gates.reason(macro.line, matcher.check_amd_side),
                        captures={"KEYWORD": Capture(word, start, end), "EVIDENCE": Capture(evidence, start, end)})
            continue
        # The statement is HIP code if any line that carries PTX is.
        ptx_lines = [line for line, piece in pieces if ptx_evidence(piece)] or [keyword_line]
        reasons = [gates.reason(line, matcher.check_amd_side) for line in ptx_lines]
        gate = None if any(r is None for r in reasons) else reasons[0]
        start, end = keyword.start(), keyword.start() + len(keyword.group(1))
        yield Match(start, end, gate=gate,
                    captures={"KEYWORD": Capture(keyword.group(1), start, end), "EVIDENCE": Capture(evidence, start, end)})


def _matching_paren(code: str, open_paren: int) -> int:
    depth = 0
    for i in range(open_paren, len(code)):
        char = code[i]
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return i
        elif char == ";" and depth <= 1:
            return i  # an unbalanced statement: stop at its end
    return len(code)


# --- ROCM211: intrinsics HIP does not provide ------------------------------------------------------

_MISSING_IN_HIP = re.compile(
    r"\b(__trap|__brkpt|__nanosleep|__ld(?:cv|lu|ca|cg|cs)|__st(?:cg|cs|wb|wt)|__prof_trigger|__pm[0-3]|"
    r"__v(?:abs|absdiff[su]|absss|add|addss|addus|avg[su]|cmp(?:eq|ne|[gl][et][su])|haddu|max[su]|min[su]|neg|"
    r"negss|sad[su]|set(?:eq|ne|[gl][et][su])|sub|subss|subus)[24])\s*\("
)
# Words that may stand before a call; any other identifier there makes it a declaration.
_BEFORE_CALL = frozenset({"return", "else", "case", "do", "throw", "co_return", "co_yield", "sizeof", "decltype", "noexcept"})


def intrinsics_missing_in_hip(source, matcher) -> Iterator[Match]:
    """Calls of CUDA device intrinsics that HIP does not declare. Declarations and definitions
    of the same names (a project's HIP shim: `__device__ int __vsub4(int a, int b)`) are not
    calls."""
    code = _code_only(source)
    gates = source.preprocessor_gates
    for match in _MISSING_IN_HIP.finditer(code):
        before = re.search(r"([A-Za-z_]\w*|[^\s\w])\s*$", code[max(0, match.start() - 64) : match.start()])
        if before and (before.group(1)[0].isalpha() or before.group(1)[0] == "_") and before.group(1) not in _BEFORE_CALL:
            continue
        if before and before.group(1) in ("*", "&") and re.search(r"[A-Za-z_]\w*\s*[*&]\s*$", code[max(0, match.start() - 64) : match.start()]):
            continue  # `int* __ldcs(...)` declares it
        line, _ = source.position(match.start())
        start, end = match.start(1), match.end(1)
        yield Match(start, end, gate=gates.reason(line, matcher.check_amd_side), captures={"FUNC": Capture(match.group(1), start, end)})


# --- ROCM217: the compiler's wavefront-size macro -------------------------------------------------

_WAVEFRONT_MACRO = re.compile(r"\b__AMDGCN_WAVEFRONT_SIZE(?:__)?\b")
_CONDITIONS = ("if", "elif", "ifdef", "ifndef", "elifdef", "elifndef")


def amdgcn_wavefront_size_macro(source, matcher) -> Iterator[Match]:
    """Every read of `__AMDGCN_WAVEFRONT_SIZE` / `__AMDGCN_WAVEFRONT_SIZE__`: a condition that
    tests it (reported as a test: without the macro the other branch is taken, silently), and
    a use of its value (an error where the compiler no longer defines it). A use inside the
    branch of a test of whether it is defined is the test's to report."""
    code = _code_only(source)
    gates = source.preprocessor_gates
    directives = source.directives
    guarded = _lines_guarded_by_defined(directives, _WAVEFRONT_MACRO)
    directive_at = {}
    for directive in directives:
        for line in range(directive.line, directive.last_line + 1):
            directive_at[line] = directive
    reported: set[int] = set()
    for hit in _WAVEFRONT_MACRO.finditer(code):
        line, _ = source.position(hit.start())
        directive = directive_at.get(line)
        is_test = directive is not None and directive.keyword in _CONDITIONS
        if (line in guarded and not is_test) or (directive is not None and directive.line in reported):
            continue
        if directive is not None:
            reported.add(directive.line)
        if is_test:
            what = f"`#{directive.keyword} {' '.join(directive.text.split())}`"
            effect = "tests it: without it the condition reads the macro as undefined (0) and the build takes another branch without a word"
        elif directive is not None and directive.keyword == "define":
            name = directive.text.split("(")[0].split()[0] if directive.text.split() else "it"
            what = f"`#define {name}`"
            effect = f"takes its value: every use of `{name}` fails to compile (undeclared identifier) where the macro is gone"
        else:
            what = f"`{hit.group(0)}`"
            effect = "reads its value: this fails to compile (undeclared identifier) where the macro is gone"
        start, end = hit.start(), hit.end()
        yield Match(start, end, gate=gates.reason(line, matcher.check_amd_side),
                    captures={"WHAT": Capture(excerpt(what), start, end), "EFFECT": Capture(effect, start, end),
                              "MACRO": Capture(hit.group(0), start, end)})


def _lines_guarded_by_defined(directives, name: re.Pattern) -> set[int]:
    """Lines inside a branch taken only where a macro matching `name` is defined: `#ifdef
    NAME`, `#if defined(NAME)` (with `&&`), up to the branch's end."""
    guarded: set[int] = set()
    stack: list[tuple[int, bool]] = []  # (line the branch starts after, whether it is guarded)
    for directive in directives:
        keyword = directive.keyword
        if keyword in ("if", "ifdef", "ifndef"):
            stack.append((directive.last_line, _needs_defined(keyword, directive.text, name)))
        elif keyword in ("elif", "elifdef", "elifndef", "else") and stack:
            start, guard = stack[-1]
            if guard:
                guarded.update(range(start + 1, directive.line))
            stack[-1] = (directive.last_line, keyword != "else" and _needs_defined(keyword, directive.text, name))
        elif keyword == "endif" and stack:
            start, guard = stack.pop()
            if guard:
                guarded.update(range(start + 1, directive.line))
    return guarded


def _needs_defined(keyword: str, condition: str, name: re.Pattern) -> bool:
    if keyword in ("ifdef", "elifdef"):
        return bool(name.fullmatch(condition.strip()))
    if keyword in ("if", "elif"):
        if "||" in condition:
            return False
        return any(not negated and name.fullmatch(word)
                   for negated, word in re.findall(r"(!?)\s*\bdefined\s*\(?\s*(\w+)", condition))
    return False


# --- ROCM220: ROCm-only code where the CUDA build compiles it -------------------------------------

# Headers that only a ROCm installation provides: HIP's own (`hip/...`; HIP for the NVIDIA
# platform is a separate install few NVIDIA machines have) and the ROCm libraries.
_ROCM_HEADER = re.compile(
    r'^\s*[<"]\s*((?:hip|hipcub|hipblas|hipblaslt|hipsparse|hipsparselt|hipfft|hiprand|hipsolver|hiptensor|rocblas|'
    r"rocprim|rocrand|rocsparse|rocsolver|rocfft|rocwmma|rocthrust|rccl|miopen|migraphx|ck|ck_tile|roctracer|"
    r'rocprofiler|rocm_smi|amd_smi|hsa)/[^>"]+|(?:hipblas|hipblaslt|rocblas|rccl|hipcub|hiprand|hipfft|hipsparse|'
    r'hipsolver)\.h(?:pp)?)\s*[>"]'
)
_AMDGCN_BUILTIN = re.compile(r"\b__builtin_amdgcn_\w+")


def rocm_only_code(source, matcher) -> Iterator[Match]:
    """`#include` of a header only ROCm provides, and calls of `__builtin_amdgcn_*`, outside
    every GPU stack test: code the CUDA build compiles too, unless the project says otherwise
    (the project pass asks which files the CUDA build reads). Each include is reported; the
    builtins once per file, at the first, with how many there are. `.hip` files are HIP
    source and left alone."""
    if (source.path or "").lower().endswith(".hip"):
        return
    gates = source.preprocessor_gates
    for directive in source.directives:
        if directive.keyword not in ("include", "include_next"):
            continue
        header = _ROCM_HEADER.match(directive.text)
        if header is None:
            continue
        start = source.line_starts[directive.line - 1]
        end = start + len(source.line_text(directive.line).rstrip())
        what = f"`#include {directive.text.strip()}`"
        yield Match(start, end, gate=gates.reason(directive.line, matcher.check_amd_side),
                    captures={"WHAT": Capture(what, start, end), "NEEDS": Capture(_header_needs(header.group(1)), start, end)})
    if "__builtin_amdgcn_" not in source.text:
        return
    code = _code_only(source)
    builtins = [(hit, source.position(hit.start())[0]) for hit in _AMDGCN_BUILTIN.finditer(code)]
    ungated = [(hit, line) for hit, line in builtins if gates.reason(line, matcher.check_amd_side) is None]
    chosen = ungated or builtins
    if chosen:
        hit, line = chosen[0]
        more = len(ungated) - 1 if ungated else len(builtins) - 1
        what = f"`{hit.group(0)}`" + (f" (and {more} more AMD builtin call{'s' if more != 1 else ''} in this file)" if more > 0 else "")
        yield Match(hit.start(), hit.end(), gate=gates.reason(line, matcher.check_amd_side),
                    captures={"WHAT": Capture(what, hit.start(), hit.end()),
                              "NEEDS": Capture("nvcc has no AMD GPU builtins", hit.start(), hit.end())})


def _header_needs(header: str) -> str:
    if header.startswith("hip/"):
        return "nvcc finds HIP's headers only where HIP is installed for the NVIDIA platform"
    return "nvcc finds it only on a machine with ROCm installed, and it declares AMD-only code"


# --- ROCM218 / ROCM219: the CUDA runtime surface ---------------------------------------------------

_CONDITION_LINE = re.compile(r"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b")
# Error-checking helpers projects name after CUDA (`cudaCheck(...)`, `cudaCheckError()`,
# `cudaSafeCall`): the project's own macros, defined in a header of its own.
_PROJECT_HELPER = re.compile(r"^cuda(?:Check|Safe|Assert|Catch)\w*$")
# A file that includes HIP's headers outside every stack test is written for HIP: the CUDA
# names it uses are its own aliases of HIP's (`typedef __hip_bfloat16 nv_bfloat16;`).
_HIP_INCLUDE = re.compile(r'^\s*[<"]\s*hip/')
# What before a name makes its occurrence a definition: `#define`, `using`, a return type.
_DEFINE_BEFORE = re.compile(r"#[ \t]*define[ \t]+$|\busing\s+$")
_TYPE_BEFORE = re.compile(r"(?<![\w:])([A-Za-z_][\w:]*)(?:<[^<>;(){}]*>)?[\s*&]+$")
_NOT_TYPES = frozenset({
    "return", "else", "case", "throw", "new", "delete", "sizeof", "const", "volatile", "static", "extern", "inline",
    "constexpr", "typename", "struct", "class", "enum", "union", "unsigned", "signed", "goto", "using", "typedef",
    "co_return", "__host__", "__device__", "__global__", "decltype", "noexcept", "template", "operator", "do",
})


def _defines(code: str, start: int, end: int) -> bool:
    """Does the name at code[start:end] get defined here (`#define NAME`, `using NAME =`,
    `typedef ... NAME;`, `int64_t NAME(...)` declared with a return type, a member `NAME_`)?
    No project defines CUDA's own names outside a shim, so such a name is the project's."""
    name = code[start:end]
    before = code[max(0, start - 120) : start]
    if name.endswith("_") or _DEFINE_BEFORE.search(before):
        return True
    # The statement the name is in: from the end of the previous one, less preprocessor lines.
    statement = before[max(before.rfind(";"), before.rfind("{"), before.rfind("}")) + 1 :]
    statement = "\n".join(line for line in statement.split("\n") if not line.lstrip().startswith("#"))
    after = code[end : end + 4].lstrip()
    if after.startswith(";"):
        return re.search(r"\btypedef\b", statement) is not None
    if after.startswith("("):
        typed = _TYPE_BEFORE.search(statement)
        return typed is not None and typed.group(1) not in _NOT_TYPES
    return False


def cuda_runtime_not_hipified(source, matcher) -> Iterator[Match]:
    """One hit per file that uses the CUDA runtime surface (rocmlint.cpp.cuda_api): headers,
    runtime and driver API names, bf16/fp8 types. It is at the first use outside every GPU
    stack test and names what the file uses; whether the project's build hipifies the file is
    the project pass's to say (the check is `hipify-gated`). Names the file defines itself, and
    names in preprocessor conditions (`#if CUDART_VERSION`), are not uses."""
    from rocmlint.cpp.cuda_api import RUNTIME_HEADER, RUNTIME_NAME, WITHOUT_HIP_COUNTERPART

    code = _code_only(source)
    gates = source.preprocessor_gates
    uses: list[tuple[int, int, str, int]] = []  # (start, end, name, line)
    for directive in source.directives:
        if directive.keyword == "include":
            if _HIP_INCLUDE.match(directive.text) and gates.reason(directive.line) is None:
                return
            header = RUNTIME_HEADER.match(directive.text)
            if header:
                start = source.line_starts[directive.line - 1]
                uses.append((start, start + len(source.line_text(directive.line).rstrip()), f"<{header.group(1)}>", directive.line))
    own: set[str] = set()
    hits = []
    for hit in RUNTIME_NAME.finditer(code):
        name = hit.group(0)
        if name in WITHOUT_HIP_COUNTERPART or _PROJECT_HELPER.match(name):
            continue
        if _defines(code, hit.start(), hit.end()):
            own.add(name)
            continue
        hits.append(hit)
    for hit in hits:
        name = hit.group(0)
        if name in own:
            continue
        line, _ = source.position(hit.start())
        if _CONDITION_LINE.match(source.line_text(line)):
            continue
        uses.append((hit.start(), hit.end(), name, line))
    if not uses:
        return
    uses.sort()
    ungated = [use for use in uses if gates.reason(use[3], matcher.check_amd_side) is None]
    counted = ungated or uses
    distinct = list(dict.fromkeys(name for _, _, name, _ in counted))
    start, end, _, line = counted[0]
    shown = ", ".join(f"`{name}`" for name in distinct[:4]) + (f" and {len(distinct) - 4} more" if len(distinct) > 4 else "")
    count = f"{len(distinct)} CUDA runtime name{'s' if len(distinct) != 1 else ''}"
    yield Match(start, end, gate=gates.reason(line, matcher.check_amd_side),
                captures={"COUNT": Capture(count, start, end), "NAMES": Capture(shown, start, end)})


def cuda_api_without_hip_counterpart(source, matcher) -> Iterator[Match]:
    """Each use of a CUDA runtime name HIP has no counterpart for (rocmlint.cpp.cuda_api)."""
    from rocmlint.cpp.cuda_api import WITHOUT_HIP_COUNTERPART

    code = _code_only(source)
    gates = source.preprocessor_gates
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, WITHOUT_HIP_COUNTERPART)) + r")\b")
    hits = list(pattern.finditer(code))
    own = {hit.group(1) for hit in hits if _defines(code, hit.start(1), hit.end(1))}
    for hit in hits:
        name = hit.group(1)
        if name in own:
            continue
        line, _ = source.position(hit.start())
        missing = WITHOUT_HIP_COUNTERPART[name]
        start, end = hit.start(), hit.end()
        yield Match(start, end, gate=gates.reason(line, matcher.check_amd_side),
                    captures={"NAME": Capture(name, start, end), "WHAT": Capture(missing.what, start, end),
                              "INSTEAD": Capture(missing.instead, start, end), "EVIDENCE": Capture(missing.evidence, start, end)})


# --- ROCM221: host code sized by a compile-time warp size -----------------------------------------

# Names that say warp size (ROCM204's); a lower-case one counts only where the file defines it
# as a number (`constexpr int warp_size = 32;`), not a run-time value (`= prop.warpSize`).
_WARP_SIZE_NAME = re.compile(r"(?i)^(?:k_?)?(?:warp_?size|threads_?per_?warp|lanes?_?per_?warp|warp_?threads|warp_?lanes)$")
_WARP_WORD = re.compile(r"\b\w*(?:WARP|[Ww]arp)\w*")
_NUMBER_DEFINITION = r"(?:#[ \t]*define[ \t]+{name}[ \t]+\(?\s*\d+[uU]?\s*\)?[ \t]*$|\b(?:constexpr|const)\b[^;=()]*\b{name}\s*=\s*\d+[uU]?\s*;)"
# A condition that picks a value per AMD target, which only the device pass can see.
_PER_TARGET = re.compile(r"__GFX\d+__|__gfx\w+__|__AMDGCN_WAVEFRONT_SIZE|__HIP_DEVICE_COMPILE__|__AMDGCN__")
_WARP_COLLECTIVE = re.compile(r"\b(?:__shfl\w*|__ballot\w*|__syncwarp|__any_sync|__all_sync|__activemask|__reduce_\w+_sync|__match_\w+_sync|tiled_partition)\b")
_LAUNCH = re.compile(r"\b([A-Za-z_]\w*)\s*(?:<[^;<>]*(?:<[^;<>]*>[^;<>]*)*>)?\s*<<<")


def host_warp_size(source, matcher) -> Iterator[Match]:
    """Host functions that size work with a compile-time warp size: a warp-size constant
    (`WARP_SIZE`, `kWarpSize`), or a launch whose block is one 32-thread warp
    (`k<<<n, 32>>>`). One hit per host function, at the first such place. Reported where the
    constant is chosen per AMD target (the host pass sees only its fallback), or where a
    kernel the function launches works with the whole wavefront (rocmlint.cpp.wave);
    elsewhere gated as keeping to 32-lane groups, which the project pass reports in projects
    with no AMD side."""
    code = _code_only(source)
    # Host code that sizes work launches it: a file that launches nothing has none to check.
    if "<<<" not in code and "dim3" not in code and "launch" not in code.lower():
        return
    words = {w for w in set(_WARP_WORD.findall(code)) if _WARP_SIZE_NAME.match(w)}
    if not words and "<<<" not in code:
        return
    constants = {w for w in words if not w[0].islower() or re.search(_NUMBER_DEFINITION.format(name=re.escape(w)), code, re.M)}
    per_target = _per_target_constants(source, constants)
    context = source.wave_context
    kernels = {f.name: f for f in context.functions if f.runs_on != "host" and f.name}
    gates = source.preprocessor_gates
    constant_word = re.compile(r"\b(" + "|".join(map(re.escape, sorted(constants))) + r")\b") if constants else None
    device_kernels = sorted(name for name, f in kernels.items() if f.runs_on == "device")
    kernel_word = re.compile(r"\b(?:" + "|".join(map(re.escape, device_kernels)) + r")\b") if device_kernels else None
    for function in context.functions:
        # `MACRO_BEGIN namespace x {` reads as a function named `namespace`: not one.
        if function.runs_on != "host" or function.name in _NOT_FUNCTIONS:
            continue
        nested = [(o.start, o.end) for o in context.functions if function.start < o.start and o.end <= function.end]
        body = _without_nested(code, function, nested) if nested else code[function.start : function.end]
        places: list[tuple[int, int, str]] = []
        if constant_word is not None:
            hit = constant_word.search(body)
            if hit:
                places.append((function.start + hit.start(), function.start + hit.end(), f"`{hit.group(1)}`"))
        launched = []
        for launch in _LAUNCH.finditer(body):
            launched.append(launch.group(1))
            arguments = _launch_arguments(body, launch.end())
            kernel = kernels.get(launch.group(1))
            # One warp per block matters only to a kernel that works with its warp.
            warp_work = kernel is not None and _WARP_COLLECTIVE.search(code, kernel.start, kernel.end)
            if warp_work and len(arguments) >= 2 and _one_warp_block(arguments[1][0], constants):
                at = function.start + arguments[1][1]
                places.append((at, at + len(arguments[1][0]), f"a block of one 32-thread warp (`{arguments[1][0]}`)"))
        if not places:
            continue
        if kernel_word is not None:
            # A kernel named in the function (`cudaLaunchKernelEx(&config, kernel, ...)`) is one it launches.
            launched += [hit.group(0) for hit in kernel_word.finditer(body)]
        start, end, what = min(places)
        line, _ = source.position(start)
        gate = gates.reason(line, matcher.check_amd_side)
        captures = {"WHAT": Capture(what, start, end)}
        named = re.match(r"`(\w+)`$", what)
        if named and named.group(1) in per_target:
            where = per_target[named.group(1)]
            captures["WAVE"] = Capture(f"`{named.group(1)}` is chosen per AMD target in the device pass (line {where}), so the host pass sees only its fallback", start, end)
            yield Match(start, end, gate=gate, captures=captures)
            continue
        site = next((context.at(kernels[name].start) for name in launched if name in kernels and context.at(kernels[name].start)), None)
        if site is not None:
            captures["WAVE"] = Capture(f"it sizes a launch of a kernel that works with the whole wavefront ({site.describe()})", start, end)
            yield Match(start, end, gate=gate, captures=captures)
            continue
        yield Match(start, end, gate=keeps_to_32_lane_groups(gate), captures=captures, variant="no-wave-site")


_NOT_FUNCTIONS = frozenset({"namespace", "class", "struct", "union", "enum", "extern"})


def _without_nested(code: str, function, nested: list[tuple[int, int]]) -> str:
    """The text of `function` with the functions nested in it blanked (same offsets)."""
    pieces, at = [], function.start
    for start, end in sorted(nested):
        if start < at:
            continue
        pieces.append(code[at:start])
        pieces.append(" " * (end - start))
        at = end
    pieces.append(code[at : function.end])
    return "".join(pieces)


def _launch_arguments(text: str, start: int) -> list[tuple[str, int]]:
    """The arguments of a launch configuration starting at `start` (after `<<<`), each with
    its offset in `text`."""
    arguments, depth, current, offset = [], 0, "", start
    for index in range(start, min(len(text), start + 400)):
        char = text[index]
        if text.startswith(">>>", index) and depth == 0:
            break
        if char in "([{<":
            depth += 1
        elif char in ")]}>":
            depth -= 1
        if char == "," and depth == 0:
            arguments.append((current, offset))
            current, offset = "", index + 1
            continue
        current += char
    arguments.append((current, offset))
    cleaned = []
    for argument, at in arguments:
        stripped = argument.strip()
        cleaned.append((stripped, at + (len(argument) - len(argument.lstrip()))))
    return cleaned


def _one_warp_block(argument: str, constants: set[str]) -> bool:
    names = "|".join(map(re.escape, sorted(constants)))
    single = rf"(?:32[uU]?{'|' + names if names else ''})"
    return bool(re.fullmatch(rf"\(?\s*{single}\s*\)?|dim3\s*[({{]\s*{single}\s*(?:,\s*1\s*){{0,2}}[)}}]", argument))


def _per_target_constants(source, constants: set[str]) -> dict[str, int]:
    """Constants this file defines under a test of the AMD target (`#if defined(__GFX9__)`):
    line of the definition, by name."""
    if not constants or not _PER_TARGET.search(source.text):
        return {}
    found: dict[str, int] = {}
    open_conditions: list[str] = []
    for directive in source.directives:
        keyword = directive.keyword
        if keyword in ("if", "ifdef", "ifndef"):
            open_conditions.append(directive.text)
        elif keyword in ("elif", "elifdef", "elifndef", "else") and open_conditions:
            open_conditions[-1] = open_conditions[-1] + " " + directive.text
        elif keyword == "endif" and open_conditions:
            open_conditions.pop()
        elif keyword == "define":
            name = directive.text.split("(")[0].split()[0] if directive.text.split() else ""
            if name in constants and any(_PER_TARGET.search(c) for c in open_conditions):
                found.setdefault(name, directive.line)
    return found
