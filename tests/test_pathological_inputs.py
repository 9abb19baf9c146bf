"""Generated worst cases for each stage that used to be super-linear in a file's size.

These guard against a hang or an explosion, not a speed target: each bound is far above what
the linear stages take (well under 3 s each on a 2-core machine) and far below what the old
quadratic stages took on the same inputs (measured: 19 s to over 5 minutes; see CHANGELOG).
"""

import time

import pytest

from rocmlint.files.discovery import Target
from rocmlint.engine import check_file, select_checks
from rocmlint.findings import ScanResult
from rocmlint.files.languages import language_of
from rocmlint.report import render

BOUND_SECONDS = 25
SHFL = "__shfl_xor_sync(0xffffffff, v, 1);\n"


def _plain_python() -> str:
    body = []
    size = 0
    index = 0
    while size < 1_000_000:
        block = (
            f"def function_{index}(x, y):\n    z = torch.matmul(x, y) + {index}\n    if z.sum() > {index}:\n"
            f"        return z * 2\n    return [v for v in range(10)]\n\n"
        )
        body.append(block)
        size += len(block)
        index += 1
    return "import torch\nimport pynvml\n\n" + "".join(body)


CASES = {
    # `<<<` that is no launch, repeated: each one used to scan to the end of the file.
    "shift_chain.cu": lambda: "int f() { return " + "a <<< b " * 10_000 + "; }\n" + SHFL,
    "unclosed_launch.cu": lambda: SHFL + "k<<<a, b\n" * 12_000,
    "pynvml_imports.py": lambda: "import pynvml\n" * 10_000,
    "nested_if.cu": lambda: "#if A\n" * 20_000 + SHFL + "#endif\n" * 20_000,
    # One line of 420 KB with 12,000 findings and characters outside the BMP before them.
    "one_line.cu": lambda: "/* \U0001d518\u00e9 */ " + "__shfl_xor_sync(0xffffffff, v, 1); " * 12_000 + "\n",
    "plain_python.py": _plain_python,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_stage_time_is_bounded(tmp_path, name):
    path = tmp_path / name
    path.write_text(CASES[name](), encoding="utf-8")
    checks = select_checks(None, preview=True)
    started = time.perf_counter()
    findings, problems = check_file(Target(str(path), language_of(name)), checks, 0, {})
    result = ScanResult(findings=[f for f in findings if f.gate is None], problems=problems, files_scanned=1)
    for fmt in ("text", "json", "sarif"):
        render(fmt, result, checks)
    elapsed = time.perf_counter() - started
    assert problems == [] and result.findings
    assert elapsed < BOUND_SECONDS, f"{name}: {elapsed:.1f} s"
