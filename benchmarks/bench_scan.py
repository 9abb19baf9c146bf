"""Time `rocmlint scan` against the tools it runs beside, on one tree, in paired rounds.

    python benchmarks/bench_scan.py                      # the installed `torch` package
    python benchmarks/bench_scan.py --package transformers
    python benchmarks/bench_scan.py PATH --rounds 3 --out docs/benchmarks.md
    python benchmarks/bench_scan.py PATH --scaling 1,2,4

A benchmark, not a test: it asserts nothing about speed. The tree is copied into a temporary
folder first (shutil.copytree, links kept as links), so that the ignore rules of a work tree
around it (a virtual environment inside a git checkout is ignored by git, so rocmlint would
skip it) do not change what is read, and so that no cache lands in the tree itself. Every
tool then reads the same copy, each finding its own files in it:

- rocmlint cold (`--no-cache`, and with an empty cache directory that the run fills) and warm
  (the same cache directory again, nothing changed); the Python side (`--select` of the checks
  that read Python only) and the C/C++ side (`--select` of the C/C++ checks);
- `ruff check --isolated --no-cache` with ruff's default rules, on one thread
  (`RAYON_NUM_THREADS=1`) and on all of them, and with `--select E9` (syntax errors only:
  ruff's cheapest full parse); rocmlint's Python side runs with `-j 1` and with its default
  jobs beside them;
- `ast-grep scan -j 1` with rules made from rocmlint's C/C++ checks (the ast-grep rules as
  they are; text and function checks as a regex over the file, the cheapest form of the same
  question; see `_astgrep_rules`), over the same C/C++ file types, when ast-grep is installed;
- `semgrep scan -j 1` with one regex rule per check (its markers), when semgrep is installed;
- `flake8` with the rocmlint plugin and without it (the same command, the plugin's entry
  point filtered out of flake8's plugin list), `--select E9,ROCM` both times;
- floors: `cat` of the files rocmlint reads and `ast.parse` of the `.py` files, each in one
  process; and rocmlint's own floor on one thread: what its Python side cannot leave out,
  however fast the rest (read every `.py` file, look for the Python checks' markers and text
  tests in it, parse the files those keep; no analysis, matching, project pass or report).

Rounds are paired: every tool runs once per round, in the same order, so a ratio is taken
between runs that saw the same load on the machine; the table shows medians of times and of
per-round ratios. Peak RSS is `ru_maxrss` from `wait4` of each run: the largest single
process of the run (a worker pool's processes are not summed).

It needs rocmlint's test extras and ruff, nothing else (ast-grep and semgrep are run where they
are installed), and no network: `pip install -e ".[test]" ruff`, from wheels carried over if
need be. The trees are the installed `torch` and `transformers` packages of the test extras, or
any folder.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from rocmlint import __version__
from rocmlint.catalog.loader import load_catalog
from rocmlint.files.discovery import Excludes, find_files

HERE = Path(__file__).resolve().parent
CPP_GLOBS = ["*.cu", "*.cuh", "*.hip", "*.cpp", "*.cc", "*.cxx", "*.c++", "*.c", "*.h", "*.hpp", "*.hh", "*.hxx", "*.inl"]
# What rocmlint's function matchers for C/C++ look at, as ast-grep rules of the same reach.
_FUNCTION_RULES = {
    "ROCM004": {"kind": "gnu_asm_expression"},
    "ROCM206": {"any": [{"kind": "preproc_if"}, {"kind": "preproc_elif"}], "regex": "__CUDA_ARCH__"},
    "ROCM209": {"kind": "declaration", "regex": "__shared__|cudaFuncAttributeMaxDynamicSharedMemorySize"},
    "ROCM211": {"kind": "call_expression", "has": {"field": "function", "regex": "^(__nanosleep|__trap|__ld[gc][agsv]|__st[gc][gsw]|__v[a-z0-9]+)$"}},
    "ROCM215": {"kind": "array_declarator", "has": {"field": "size", "regex": "^(32|WARP_SIZE|kWarpSize)$"}},
}


def _which(name: str) -> str | None:
    found = shutil.which(name)
    if found is None:
        candidate = Path(sys.executable).parent / name
        found = str(candidate) if candidate.exists() else None
    return found


def _version(command: list[str]) -> str:
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=60)
        return (out.stdout or out.stderr).strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return "?"


def run_once(command: list[str], cwd: str, env: dict | None = None) -> tuple[float, int, int]:
    """(seconds, peak RSS in KiB of the largest process of the run, exit code)."""
    start = time.perf_counter()
    # semgrep asks the network for a newer version unless told not to (minutes without one).
    env = dict(env or os.environ, SEMGREP_ENABLE_VERSION_CHECK="0", SEMGREP_SEND_METRICS="off")
    # Python tools run from bytecode, as after an installation (see _warm_up).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # stderr is read after the wait: the tools here write little to it.
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    error = process.stderr.read().decode(errors="replace") if process.stderr else ""
    process.stderr.close()
    if process.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command[:4])} ... exited {process.returncode}:\n{error[-2000:]}")
    return elapsed, usage.ru_maxrss, process.returncode


def _astgrep_rules(folder: Path) -> Path:
    """An sgconfig.yml and one rule file per rocmlint C/C++ check (see the module docstring)."""
    rules = folder / "rules"
    rules.mkdir(parents=True)
    for check in load_catalog():
        if "cpp" not in check.languages or not check.enabled_by_default:
            continue
        if check.matcher_kind == "ast-grep":
            spec = {k: v for k, v in check.matcher_spec.items() if k in ("rule", "constraints", "utils")}
        elif check.id in _FUNCTION_RULES:
            spec = {"rule": _FUNCTION_RULES[check.id]}
        else:
            spec = {"rule": {"kind": "translation_unit", "regex": "|".join(_regex_escape(m) for m in check.markers)}}
        document = {"id": check.id, "language": "cpp", "severity": "warning", "message": check.id, **spec}
        (rules / f"{check.id}.yml").write_text(yaml.safe_dump(document, sort_keys=False))
    config = folder / "sgconfig.yml"
    config.write_text(yaml.safe_dump({"ruleDirs": ["rules"], "languageGlobs": {"cpp": CPP_GLOBS}}))
    return config


def _regex_escape(text: str) -> str:
    return "".join("\\" + c if c in r"\.^$|?*+()[]{}" else c for c in text)


def _semgrep_rules(folder: Path) -> Path:
    rules = []
    for check in load_catalog():
        if not check.enabled_by_default:
            continue
        rules.append(
            {
                "id": check.id,
                "languages": ["regex"],
                "severity": "WARNING",
                "message": check.id,
                "pattern-regex": "|".join(_regex_escape(m) for m in check.markers),
            }
        )
    path = folder / "semgrep.yml"
    path.write_text(yaml.safe_dump({"rules": rules}, sort_keys=False))
    return path


_FLAKE8_WITHOUT = """
import sys
from flake8.plugins import finder
_find = finder.find_plugins
def _without(*args, **kwargs):
    return [p for p in _find(*args, **kwargs) if p.package != "rocmlint"]
finder.find_plugins = _without if sys.argv.pop(1) == "without" else _find
from flake8.main.cli import main
sys.exit(main())
"""


def _write_floors(folder: Path, files: list[str], python_files: list[str]) -> tuple[Path, Path]:
    listing = folder / "files.txt"
    listing.write_text("\n".join(files))
    python_listing = folder / "python_files.txt"
    python_listing.write_text("\n".join(python_files))
    parse = folder / "parse_floor.py"
    parse.write_text(
        "import ast, sys\n"
        "for name in open(sys.argv[1]).read().split('\\n'):\n"
        "    try:\n"
        "        ast.parse(open(name, 'rb').read())\n"
        "    except (SyntaxError, ValueError, RecursionError, MemoryError):\n"
        "        pass\n"
    )
    # What rocmlint's Python side cannot do without, however fast the rest: read each file,
    # look for the checks' markers and text tests in it, and parse the files those keep.
    (folder / "prefilter_floor.py").write_text(
        "import ast, sys\n"
        "from rocmlint.engine import relevant_checks, select_checks, source_of\n"
        "checks = select_checks(sys.argv[2].split(','))\n"
        "for name in open(sys.argv[1]).read().split('\\n'):\n"
        "    with open(name, 'rb') as file:\n"
        "        source, _ = source_of(name, file.read(), 'python')\n"
        "    if source is not None and relevant_checks(source, checks):\n"
        "        try:\n"
        "            ast.parse(source.text)\n"
        "        except (SyntaxError, ValueError, RecursionError, MemoryError):\n"
        "            pass\n"
    )
    return listing, python_listing


def _copy_tree(source: Path, target: Path, copies: int) -> None:
    for index in range(copies):
        shutil.copytree(source, target / f"copy{index}", symlinks=True)


def _files(tree: Path, languages: set[str]) -> list[str]:
    """Absolute paths: the floors run in the benchmark's own folder, not where it was started."""
    found = find_files([tree], Excludes((), tree), languages)
    return [os.path.abspath(t.path) for t in found.targets]


def _ids(predicate) -> str:
    return ",".join(c.id for c in load_catalog() if c.enabled_by_default and predicate(c))


# Runs with an environment of their own: ruff on one thread.
ENVIRONMENTS = {"ruff, one thread": {"RAYON_NUM_THREADS": "1"}}


def commands(tree: str, work: Path, jobs: str | None) -> dict[str, list[str]]:
    rocmlint = [_which("rocmlint") or "rocmlint", "scan", tree, "--format", "json", "-q", "--exit-zero", "-o", os.devnull]
    if jobs:
        rocmlint += ["-j", jobs]
    # The checks that run by default (not those in preview everywhere) that read Python only.
    python_ids = _ids(lambda c: set(c.languages) == {"python"} and not c.preview)
    cpp_ids = _ids(lambda c: set(c.languages) == {"cpp"} and not c.preview)
    ruff = [_which("ruff") or "ruff", "check", "--isolated", "--no-cache", "--exit-zero", "-q"]
    cache = str(work / "cache")
    table = {
        "rocmlint (no cache)": rocmlint + ["--no-cache"],
        "rocmlint cold": rocmlint + ["--cache-dir", cache],
        "rocmlint warm": rocmlint + ["--cache-dir", cache],
        "rocmlint -j 1 (no cache)": [*rocmlint, "-j", "1", "--no-cache"],
        "rocmlint Python checks": rocmlint + ["--no-cache", "--select", python_ids],
        "rocmlint Python checks -j 1": rocmlint + ["--no-cache", "--select", python_ids, "-j", "1"],
        "ruff": ruff + [tree],
        "ruff, one thread": ruff + [tree],
        "ruff E9": ruff + ["--select", "E9", tree],
        "rocmlint C/C++ checks": rocmlint + ["--no-cache", "--select", cpp_ids],
        "rocmlint C/C++ checks -j 1": rocmlint + ["--no-cache", "--select", cpp_ids, "-j", "1"],
        "ast-grep -j 1": [_which("ast-grep") or "ast-grep", "scan", "-j", "1", "-c", str(work / "sg" / "sgconfig.yml"), "--json=compact", tree],
        "semgrep -j 1": [
            _which("semgrep") or "semgrep", "scan", "-j", "1", "--metrics=off", "--disable-version-check", "--no-git-ignore",
            "--config", str(work / "semgrep.yml"), "-q", tree,
        ],
        "flake8 without plugin": [sys.executable, str(work / "flake8_driver.py"), "without", "--select", "E9,ROCM", tree],
        "flake8 with plugin": [sys.executable, str(work / "flake8_driver.py"), "with", "--select", "E9,ROCM", tree],
        "cat (floor)": ["sh", "-c", f"tr '\\n' '\\0' < {work / 'files.txt'} | xargs -0 cat > /dev/null"],
        "ast.parse .py (floor)": [sys.executable, str(work / "parse_floor.py"), str(work / "python_files.txt")],
        "read, text tests, parse kept .py (floor)": [
            sys.executable, str(work / "prefilter_floor.py"), str(work / "python_files.txt"), python_ids,
        ],
        "python -c pass": [sys.executable, "-c", "pass"],
        "rocmlint one-file scan": [_which("rocmlint") or "rocmlint", "scan", str(work / "one.py"), "-q", "--exit-zero", "--no-cache"],
        "ruff one file": ruff + [str(work / "one.py")],
        "flake8 one file without plugin": [sys.executable, str(work / "flake8_driver.py"), "without", "--select", "E9,ROCM", str(work / "one.py")],
        "flake8 one file with plugin": [sys.executable, str(work / "flake8_driver.py"), "with", "--select", "E9,ROCM", str(work / "one.py")],
    }
    return table


# (what, the run, the run it is divided by (None: the run's own median, in ms), the goal)
RATIOS = [
    ("Python side, one thread: rocmlint Python checks -j 1 / ruff, one thread", "rocmlint Python checks -j 1", "ruff, one thread", "≤ 1.0"),
    ("Python side, all cores: rocmlint Python checks / ruff", "rocmlint Python checks", "ruff", "≤ 1.0"),
    ("whole scan, all checks: rocmlint / ruff", "rocmlint (no cache)", "ruff", "≤ 1.5"),
    ("Python side / ast.parse of every .py file: rocmlint Python checks -j 1 / ast.parse .py", "rocmlint Python checks -j 1", "ast.parse .py (floor)", "≤ 0.3"),
    ("Python side: rocmlint Python checks / ruff E9", "rocmlint Python checks", "ruff E9", ""),
    ("rocmlint's own floor, one thread: read, text tests, parse kept .py / ruff, one thread",
     "read, text tests, parse kept .py (floor)", "ruff, one thread", ""),
    ("rocmlint's own floor / ast.parse of every .py file", "read, text tests, parse kept .py (floor)", "ast.parse .py (floor)", ""),
    ("Python side, one thread / rocmlint's own floor", "rocmlint Python checks -j 1", "read, text tests, parse kept .py (floor)", ""),
    ("one-file scan (ms)", "rocmlint one-file scan", None, "≤ 50 ms"),
    ("C/C++ side: rocmlint C/C++ checks / ast-grep -j 1", "rocmlint C/C++ checks", "ast-grep -j 1", "≤ 1.0"),
    ("C/C++ side, both one process: rocmlint -j 1 / ast-grep -j 1", "rocmlint C/C++ checks -j 1", "ast-grep -j 1", "≤ 1.0"),
    ("whole tree: rocmlint / semgrep -j 1", "rocmlint (no cache)", "semgrep -j 1", "≤ 0.1"),
    ("one-file scan / python -c pass", "rocmlint one-file scan", "python -c pass", ""),
    ("one-file scan / ruff one file", "rocmlint one-file scan", "ruff one file", ""),
    ("flake8 with plugin / without, tree", "flake8 with plugin", "flake8 without plugin", "≤ 1.02"),
    ("flake8 with plugin / without, one file", "flake8 one file with plugin", "flake8 one file without plugin", "≤ +30 ms"),
    ("warm re-scan / cold", "rocmlint warm", "rocmlint cold", "≤ 0.1"),
    ("default --jobs / -j 1", "rocmlint (no cache)", "rocmlint -j 1 (no cache)", "≤ 0.6"),
]


def benchmark(tree: Path, rounds: int, jobs: str | None, skip: set[str]) -> tuple[dict, dict]:
    # Processes waiting for or using a core when the runs start (more than the cores: times wait).
    load = os.getloadavg()[0]
    work = Path(tempfile.mkdtemp(prefix="rocmlint-bench-"))
    try:
        copy = work / "tree"
        shutil.copytree(tree, copy, symlinks=True)
        files = _files(copy, {lang for c in load_catalog() for lang in c.languages})
        python_files = _files(copy, {"python"})
        _write_floors(work, files, python_files)
        _astgrep_rules(work / "sg")
        _semgrep_rules(work)
        (work / "flake8_driver.py").write_text(_FLAKE8_WITHOUT)
        (work / "one.py").write_text("import torch\n\ntorch.backends.cudnn.benchmark = True\n")
        table = commands(str(copy), work, jobs)
        if _which("semgrep") is None:
            skip.add("semgrep -j 1")
        if _which("ast-grep") is None:
            skip.add("ast-grep -j 1")
        table = {name: command for name, command in table.items() if name not in skip}
        _warm_up(table, work)
        times: dict[str, list[float]] = {name: [] for name in table}
        peaks: dict[str, list[int]] = {name: [] for name in table}
        for round_ in range(rounds):
            shutil.rmtree(work / "cache", ignore_errors=True)
            for name, command in table.items():
                seconds, peak, _ = run_once(command, str(work), _environment(name))
                times[name].append(seconds)
                peaks[name].append(peak)
                print(f"round {round_ + 1}: {name:38} {seconds:8.3f} s {peak / 1024:7.1f} MiB", flush=True)
        facts = {
            "load": load,
            "files": len(files),
            "python_files": len(python_files),
            "cpp_files": len(_files(copy, {"cpp"})),
            "bytes": sum(os.path.getsize(f) for f in files),
        }
        return {"times": times, "peaks": peaks}, facts
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _environment(name: str) -> dict | None:
    extra = ENVIRONMENTS.get(name)
    return dict(os.environ, **extra) if extra else None


def _warm_up(table: dict[str, list[str]], work: Path) -> None:
    """One untimed run of the one-file commands: Python writes the bytecode of rocmlint and
    flake8 (an installation has it; a checkout run with PYTHONDONTWRITEBYTECODE does not)."""
    for name in ("rocmlint one-file scan", "flake8 one file with plugin", "flake8 one file without plugin"):
        if name in table:
            run_once(table[name], str(work))


def scaling(tree: Path, factors: list[int]) -> list[tuple[int, int, float, int]]:
    """(copies, bytes read, seconds with -j 1, peak KiB) per factor, one run each. One process:
    on a shared machine a pool's time says more about the other users than about the bytes."""
    rows = []
    for factor in factors:
        work = Path(tempfile.mkdtemp(prefix="rocmlint-scale-"))
        try:
            _copy_tree(tree, work, factor)
            files = _files(work, {lang for c in load_catalog() for lang in c.languages})
            size = sum(os.path.getsize(f) for f in files)
            command = [_which("rocmlint") or "rocmlint", "scan", str(work), "--format", "json", "-q", "--exit-zero", "-o", os.devnull, "--no-cache", "-j", "1"]
            seconds, peak, _ = run_once(command, str(work))
            rows.append((factor, size, seconds, peak))
            print(f"{factor}x: {size / 1e6:.1f} MB, -j 1 {seconds:.2f} s, peak {peak / 1024:.1f} MiB", flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return rows


def _shown_tree(tree: Path) -> str:
    """The tree as the table names it: an installed package by its place in site-packages, any
    other tree by its folder name (the machine's own paths mean nothing to a reader)."""
    parts = tree.resolve().parts
    if "site-packages" in parts:
        return "/".join(parts[parts.index("site-packages") :])
    return tree.name


def markdown(tree: Path, rounds: int, results: dict, facts: dict, scale_rows: list) -> str:
    times, peaks = results["times"], results["peaks"]
    lines = [
        f"## `{tree.name}`: {datetime.date.today().isoformat()}",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs ({_cpu_name()}), Linux {platform.release()}, "
        f"Python {platform.python_version()}, load average {facts['load']:.1f} at the start. Tree: `{_shown_tree(tree)}` ({facts['files']} files rocmlint reads, "
        f"{facts['python_files']} Python, {facts['cpp_files']} C/C++, {facts['bytes'] / 1e6:.1f} MB). "
        f"{rounds} paired rounds. Versions: rocmlint {__version__}; {_version([_which('ruff') or 'ruff', '--version'])}; "
        f"{_version([_which('ast-grep') or 'ast-grep', '--version'])}; "
        # semgrep is often installed on its own (pipx, another venv): ask the command.
        f"semgrep {_version([_which('semgrep') or 'semgrep', '--version']) if 'semgrep -j 1' in times else 'not run'}; "
        f"flake8 {_version([sys.executable, '-m', 'flake8', '--version']).split(' ')[0]}.",
        "",
        "| run | median s | min s | max s | peak RSS MiB |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, values in times.items():
        lines.append(
            f"| {name} | {statistics.median(values):.3f} | {min(values):.3f} | {max(values):.3f} | {max(peaks[name]) / 1024:.1f} |"
        )
    lines += ["", "| ratio | median of per-round ratios | per round | goal |", "|---|---:|---|---|"]
    for title, top, bottom, goal in RATIOS:
        if top not in times or (bottom is not None and bottom not in times):
            continue
        if bottom is None:
            per_round = [1000 * t for t in times[top]]
            lines.append(f"| {title} | {statistics.median(per_round):.0f} ms | {', '.join(f'{r:.0f}' for r in per_round)} | {goal} |")
            continue
        per_round = [a / b for a, b in zip(times[top], times[bottom])]
        extra = ""
        if goal.startswith("≤ +"):
            differences = [1000 * (a - b) for a, b in zip(times[top], times[bottom])]
            extra = f" (+{statistics.median(differences):.0f} ms)"
        lines.append(
            f"| {title} | {statistics.median(per_round):.2f}×{extra} | {', '.join(f'{r:.2f}' for r in per_round)} | {goal} |"
        )
    if scale_rows:
        lines += ["", "How cost grows with copies of the tree (one run each, `-j 1 --no-cache`):", "",
                  "| copies | MB read | s | s/MB | peak RSS MiB |", "|---:|---:|---:|---:|---:|"]
        for factor, size, seconds, peak in scale_rows:
            lines.append(f"| {factor} | {size / 1e6:.1f} | {seconds:.2f} | {seconds / (size / 1e6):.3f} | {peak / 1024:.1f} |")
    return "\n".join(lines) + "\n"


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _package_tree(name: str) -> Path:
    import importlib.util

    spec = importlib.util.find_spec(name)  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{name} is not installed: name a tree to benchmark")
    return Path(list(spec.submodule_search_locations)[0])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", nargs="?", type=Path, help="the tree to scan (default: the installed package --package names)")
    parser.add_argument("--package", default="torch", help="an installed package to scan when no tree is named (default: torch)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", help="rocmlint --jobs for the default runs (default: rocmlint's default)")
    parser.add_argument("--skip", default="", help="comma-separated run names to leave out")
    parser.add_argument("--scaling", default="", help="comma-separated copy counts, e.g. 1,2,4")
    parser.add_argument("--out", type=Path, help="append the markdown table to this file")
    args = parser.parse_args(argv)
    tree = (args.tree or _package_tree(args.package)).resolve()
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    results, facts = benchmark(tree, args.rounds, args.jobs, skip)
    scale_rows = scaling(tree, [int(f) for f in args.scaling.split(",") if f.strip()]) if args.scaling else []
    text = markdown(tree, args.rounds, results, facts, scale_rows)
    print(text)
    if args.out:
        with args.out.open("a", encoding="utf-8") as out:
            out.write("\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
