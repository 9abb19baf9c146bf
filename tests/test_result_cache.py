"""Results kept between scans (rocmlint.files.result_cache): a warm scan says exactly what a
cold one says, and anything the per-file pass reads makes a kept result stale. Kept results are
lines of one pack file per cache folder; these tests read and tamper with its lines."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, run_cli

SAMPLE = REPO / "sample_repos" / "nvidia_app"


def _scan(cwd: Path, *args: str, cache: Path | None = None) -> str:
    options = ["--no-cache"] if cache is None else ["--cache-dir", str(cache)]
    proc = run_cli("scan", ".", "--format", "json", "--show-gated", "--exit-zero", *options, *args, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _pack(cache: Path) -> Path:
    return cache / "results.pack"


def _lines(cache: Path) -> list[bytes]:
    """The entry lines of the pack (its header left out)."""
    return _pack(cache).read_bytes().split(b"\n")[1:-1]


def _entries(cache: Path) -> dict[str, dict]:
    """Kept per-file results by key, decoded (files with no marker, kept without a value, left out)."""
    entries = {}
    for line in _lines(cache):
        fields = line.split(b"\t", 5)
        if fields[0] == b"F" and fields[5] != b"-":
            entries[fields[1].decode()] = json.loads(fields[5])
    return entries


def _rewrite(cache: Path, change) -> int:
    """Replace the value of each kept per-file result by `change(key, entry)` (a dict, or bytes
    written as they are; None leaves it); how many were replaced."""
    header, *lines = _pack(cache).read_bytes().split(b"\n")
    changed = 0
    for index, line in enumerate(lines):
        fields = line.split(b"\t", 5)
        if len(fields) == 6 and fields[0] == b"F" and fields[5] != b"-":
            new = change(fields[1].decode(), json.loads(fields[5]))
            if new is not None:
                fields[5] = new if isinstance(new, bytes) else json.dumps(new).encode()
                lines[index] = b"\t".join(fields)
                changed += 1
    _pack(cache).write_bytes(b"\n".join([header, *lines]))
    return changed


def test_warm_scan_equals_cold_scan_and_reads_the_kept_results(tmp_path):
    tree = tmp_path / "app"
    shutil.copytree(SAMPLE, tree)
    cache = tmp_path / "cache"
    fresh = _scan(tree)
    cold = _scan(tree, cache=cache)
    assert cold == fresh
    entries = _entries(cache)
    assert entries, "the cold scan kept nothing"
    assert _scan(tree, cache=cache) == cold
    # The warm scan does read the kept results: a changed message in one shows in the report.

    def changed_message(key, data):
        for finding in data["findings"]:
            finding[2] = "KEPT-MESSAGE"
        return data if data["findings"] else None

    assert _rewrite(cache, changed_message)
    assert "KEPT-MESSAGE" in _scan(tree, cache=cache)


def test_damaged_entries_are_misses_not_errors(tmp_path):
    tree = tmp_path / "app"
    shutil.copytree(SAMPLE, tree)
    cache = tmp_path / "cache"
    cold = _scan(tree, cache=cache)
    damaged = [b"", b"{not json", b'{"format": 1}', b"[1, 2]", b'{"format": 1, "questions": [], "findings": [[1]], "problems": []}', b"\xff\xfe"]
    keys = sorted(_entries(cache))
    assert _rewrite(cache, lambda key, data: damaged[keys.index(key) % len(damaged)]) == len(keys)
    assert _scan(tree, cache=cache) == cold
    assert _scan(tree, cache=cache) == cold  # written again by the scan before
    # Lines of another shape, a header of another format, a pack of garbage: checked afresh.
    header, *lines = _pack(cache).read_bytes().split(b"\n")
    for index in range(0, len(lines) - 1, 3):
        lines[index] = [b"F\tzz", b"F\t" + b"0" * 40, b"\t".join(lines[index].split(b"\t")[:4]), b"P\t\t\t\t\t"][index % 4]
    _pack(cache).write_bytes(b"\n".join([header, *lines]))
    assert _scan(tree, cache=cache) == cold
    for data in (b"rocmlint-results\t9\t1\n" + b"\n".join(lines), os.urandom(4096), b""):
        _pack(cache).write_bytes(data)
        assert _scan(tree, cache=cache) == cold


def test_an_edited_file_and_another_selection_are_checked_again(tmp_path):
    tree = tmp_path / "app"
    shutil.copytree(SAMPLE, tree)
    cache = tmp_path / "cache"
    _scan(tree, cache=cache)
    target = next(p for p in sorted(tree.rglob("*.py")) if "cudnn.benchmark" in p.read_text())
    target.write_text(target.read_text() + "\n\ntorch.backends.cudnn.benchmark = True\n")
    warm = _scan(tree, cache=cache)
    assert warm == _scan(tree)
    lines = [f["line"] for f in json.loads(warm)["findings"] if f["path"].endswith(target.name) and f["code"] == "ROCM008"]
    assert len(target.read_text().splitlines()) in lines
    for selection in ("ROCM008", "ROCM0", "ROCM2"):
        assert _scan(tree, "--select", selection, cache=cache) == _scan(tree, "--select", selection)
    assert _scan(tree, "--arch", "gfx1100", cache=cache) == _scan(tree, "--arch", "gfx1100")


def test_a_change_to_an_imported_predicate_makes_the_kept_result_stale(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    utils = package / "utils.py"
    utils.write_text("import torch\n\ndef fast_path():\n    return torch.version.cuda is not None\n")
    (package / "train.py").write_text(
        "import torch\nfrom .utils import fast_path\n\nif fast_path():\n    torch.backends.cudnn.benchmark = True\n"
    )
    cache = tmp_path / "cache"
    gated = json.loads(_scan(tmp_path, cache=cache))
    assert not gated["findings"] and gated["gated_count"] == 1
    # train.py is unchanged; what it imports no longer tests the GPU stack.
    utils.write_text("import torch\n\ndef fast_path():\n    return True\n")
    warm = _scan(tmp_path, cache=cache)
    assert warm == _scan(tmp_path)
    assert [f["code"] for f in json.loads(warm)["findings"]] == ["ROCM008"]


def test_a_change_two_imports_away_makes_every_kept_result_that_relied_on_it_stale(tmp_path, monkeypatch):
    """train.py and serve.py rely on fast_path, a platform test because of what base.py's
    on_cuda tests. The second file's answer comes from memory in a one-process scan: it still
    depends on base.py (and the result found by its signature is checked all the same)."""
    import rocmlint.files.tree as tree_module
    from rocmlint.python import gates

    monkeypatch.setattr(tree_module, "RACY_NANOSECONDS", 0)  # results found by signature too
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    base = package / "base.py"
    base.write_text("import torch\n\ndef on_cuda():\n    return torch.version.cuda is not None\n")
    (package / "utils.py").write_text("from .base import on_cuda\n\ndef fast_path():\n    return on_cuda()\n")
    for name in ("train.py", "serve.py"):
        (package / name).write_text("import torch\nfrom .utils import fast_path\n\nif fast_path():\n    torch.backends.cudnn.benchmark = True\n")
    cache = tmp_path / "cache"
    assert _in_process_scan(tmp_path, cache) == []  # both gated by the platform test
    base.write_text("import torch\n\ndef on_cuda():\n    return True\n")
    # What this process keeps in memory about other modules is forgotten, as in a new process.
    gates._IMPORTED_CACHE.clear()
    gates._MODULE_CACHE.clear()
    assert _in_process_scan(tmp_path, cache) == [("serve.py", "ROCM008", 5), ("train.py", "ROCM008", 5)]


def test_default_directory_environment_variable_and_no_cache(tmp_path):
    tree = tmp_path / "app"
    shutil.copytree(SAMPLE, tree)
    cold = _scan(tree)
    xdg = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    proc = run_cli("scan", ".", "--format", "json", "--show-gated", "--exit-zero", cwd=tree, env=xdg)
    assert proc.stdout == cold and proc.stderr == ""
    # Kept in the user's cache folder, one folder per scan root; nothing in the scanned tree.
    (kept,) = (tmp_path / "xdg" / "rocmlint" / "results").iterdir()
    assert _entries(kept) and (kept / ".gitignore").read_text().strip().endswith("*")
    assert (kept / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55\n")
    assert not (tree / ".rocmlint_cache").exists()
    other = tmp_path / "other"
    shutil.copytree(SAMPLE, other)
    run_cli("scan", ".", "--format", "json", "--exit-zero", cwd=other, env=xdg)
    assert len(list((tmp_path / "xdg" / "rocmlint" / "results").iterdir())) == 2  # projects do not share one
    # A `.rocmlint_cache` folder of an older rocmlint is never scanned, even with a pitfall in it.
    (tree / ".rocmlint_cache").mkdir()
    (tree / ".rocmlint_cache" / "planted.py").write_text("import torch\ntorch.backends.cudnn.benchmark = True\n")
    assert run_cli("scan", ".", "--format", "json", "--show-gated", "--exit-zero", cwd=tree, env=xdg).stdout == cold
    moved = tmp_path / "elsewhere"
    proc = run_cli("scan", ".", "--format", "json", "--show-gated", "--exit-zero", cwd=tree, env={"ROCMLINT_CACHE_DIR": str(moved)})
    assert proc.stdout == cold and _entries(moved)
    shutil.rmtree(kept)
    assert run_cli("scan", ".", "--no-cache", "--format", "json", "--show-gated", "--exit-zero", cwd=tree, env=xdg).stdout == cold
    assert not kept.exists()


def test_a_warm_scan_in_a_new_process_uses_every_kept_result(tmp_path):
    """Kept results whose check asked about other files are used from the first one on: the
    functions those questions name are found even before anything in the new process has
    imported their module (the first such result was taken for stale and checked again)."""
    import time

    tree = tmp_path / "app"
    shutil.copytree(SAMPLE, tree)
    # The copies settle first (tree.RACY_NANOSECONDS): else a later scan may keep the
    # signature of a file that settled since the last one, and write the pack for it.
    time.sleep(2.2)
    cache = tmp_path / "cache"
    cold = _scan(tree, cache=cache)
    with_questions = [key for key, entry in _entries(cache).items() if entry["questions"]]
    assert with_questions, "the sample tree should hold files whose checks ask about other files"
    # A scan that made nothing new writes nothing: the pack is the one the cold scan wrote.
    _scan(tree, cache=cache)  # keeps the project pass (the cold scan's read files just written)
    written = (_pack(cache).stat().st_ino, _pack(cache).stat().st_mtime_ns)
    assert _scan(tree, cache=cache) == cold
    assert (_pack(cache).stat().st_ino, _pack(cache).stat().st_mtime_ns) == written


def test_a_cache_that_cannot_be_written_is_no_error(tmp_path):
    tree = tmp_path / "app"
    shutil.copytree(SAMPLE, tree)
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("")
    proc = run_cli("scan", ".", "--format", "json", "--show-gated", "--exit-zero", "--cache-dir", str(blocked / "cache"), cwd=tree)
    assert proc.returncode == 0 and proc.stdout == _scan(tree), proc.stderr


def test_the_parsed_catalog_is_kept_and_never_read_for_changed_check_files(tmp_path, monkeypatch):
    from rocmlint.catalog import loader

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    folder = tmp_path / "checks"
    shutil.copytree(REPO / "checks", folder)
    monkeypatch.setattr(loader, "catalog_files", lambda: sorted(folder.glob("*.yaml")))
    parsed = []
    real_yaml_data = loader._yaml_data
    monkeypatch.setattr(loader, "_yaml_data", lambda name, text: parsed.append(name) or real_yaml_data(name, text))

    def load():
        loader.load_catalog.cache_clear()
        parsed.clear()
        return loader.load_catalog()

    first = load()
    assert len(parsed) == len(first) > 0
    kept = list((tmp_path / "xdg" / "rocmlint").glob("catalog-*.json"))
    assert len(kept) == 1
    # The next start builds the same checks from the kept copy, parsing no YAML.
    assert load() == first and parsed == []
    # An edited check file: its new text is parsed, never the kept data of the old one.
    edited = sorted(folder.glob("*.yaml"))[0]
    edited.write_text(edited.read_text().replace("severity: error", "severity: warning").replace("severity: note", "severity: warning"))
    changed = load()
    assert parsed and changed[0].severity == "warning" and changed[1:] == first[1:]
    # A same-size edit is noticed by its new modification time (set here: two writes within
    # one tick of the file system's clock would share one).
    text = edited.read_text()
    before = edited.stat()
    first_letter = changed[0].title[0]
    edited.write_text(text.replace("title: " + first_letter, "title: X", 1))
    assert edited.stat().st_size == before.st_size
    os.utime(edited, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    retitled = load()
    assert parsed and retitled[0].title == "X" + changed[0].title[1:]
    # A damaged kept file is parsed again, not an error; so is one edited into invalid data.
    for damaged in (tmp_path / "xdg" / "rocmlint").glob("catalog-*.json"):
        damaged.write_text("{not json")
    assert load() == retitled and parsed
    for stored in (tmp_path / "xdg" / "rocmlint").glob("catalog-*.json"):
        data = json.loads(stored.read_text())
        data["checks"][0][1]["examples"] = 7
        stored.write_text(json.dumps(data))
    assert load() == retitled and parsed
    # An invalid check file is an error, and nothing invalid is kept.
    edited.write_text(text.replace("severity: warning", "severity: loud"))
    assert "severity: loud" in edited.read_text()
    for _ in range(2):
        loader.load_catalog.cache_clear()
        with pytest.raises(loader.CheckFileError, match="severity"):
            loader.load_catalog()
    loader.load_catalog.cache_clear()


def test_files_without_markers_are_listed_and_not_read_as_text_again(tmp_path, monkeypatch):
    import rocmlint.engine as engine
    from rocmlint.config import Config

    (tmp_path / "plain.py").write_text("x = 1\n")
    (tmp_path / "gpu.py").write_text("import pynvml\n")
    decoded: list[str] = []
    real_source_of = engine.source_of

    def recording_source_of(path, *args, **kwargs):
        decoded.append(Path(path).name)
        return real_source_of(path, *args, **kwargs)

    monkeypatch.setattr(engine, "source_of", recording_source_of)
    checks = engine.select_checks(preview=True)

    def scan() -> list[tuple[str, str]]:
        request = engine.ScanRequest([tmp_path], checks, Config(root=tmp_path), jobs=1, cache_dir=str(tmp_path / "cache"))
        return [(Path(f.path).name, f.check_id) for f in engine.scan(request).findings]

    assert scan() == [("gpu.py", "ROCM001")] and sorted(decoded) == ["gpu.py", "plain.py"]
    assert [line.split(b"\t")[5] for line in _lines(tmp_path / "cache") if line.startswith(b"F")].count(b"-") == 1
    decoded.clear()
    assert scan() == [("gpu.py", "ROCM001")] and decoded == []  # one kept entry, one listed key
    (tmp_path / "plain.py").write_text("import pynvml\n")
    assert scan() == [("gpu.py", "ROCM001"), ("plain.py", "ROCM001")] and decoded == ["plain.py"]


# --- results found by the files' signatures ----------------------------------------------------


def _signature_lines(cache: Path) -> dict[str, str]:
    """The kept signatures: the path of each, and the key of the result it stands for."""
    found = {}
    for line in _lines(cache):
        fields = line.split(b"\t", 5)
        if fields[0] == b"S":
            found[json.loads(fields[4])] = fields[5].decode()
    return found


def _in_process_scan(tree: Path, cache: Path) -> list[tuple[str, str, int]]:
    import rocmlint.engine as engine
    from rocmlint.config import Config

    request = engine.ScanRequest([tree], engine.select_checks(preview=True), Config(root=tree), jobs=1, cache_dir=str(cache))
    return [(Path(f.path).name, f.check_id, f.line) for f in engine.scan(request).findings]


def test_a_warm_scan_of_settled_files_finds_their_results_without_reading_them(tmp_path):
    """Files unchanged for two seconds before a scan read them get their signature kept, and
    the next scan finds every result by it (the real clock, nothing patched)."""
    import time

    tree = tmp_path / "app"
    shutil.copytree(SAMPLE, tree)
    time.sleep(2.2)  # the copies' change times settle (tree.RACY_NANOSECONDS)
    cache = tmp_path / "cache"
    cold = _scan(tree, cache=cache)
    kept = {json.loads(line.split(b"\t", 5)[4]): line.split(b"\t", 2)[1].decode() for line in _lines(cache) if line.startswith(b"F")}
    assert kept and _signature_lines(cache) == kept  # one signature per file, naming its result
    assert _scan(tree, cache=cache) == cold == _scan(tree)


def test_a_file_found_by_its_signature_is_not_read(tmp_path, monkeypatch):
    import rocmlint.files.result_cache as result_cache
    import rocmlint.files.tree as tree_module

    monkeypatch.setattr(tree_module, "RACY_NANOSECONDS", 0)  # every file has settled
    (tmp_path / "gpu.py").write_text("import pynvml\n")
    (tmp_path / "plain.py").write_text("x = 1\n")
    cache = tmp_path / "cache"
    assert _in_process_scan(tmp_path, cache) == [("gpu.py", "ROCM001", 1)]
    assert sorted(Path(p).name for p in _signature_lines(cache)) == ["gpu.py", "plain.py"]
    hashed: list[str] = []
    real_key = result_cache.ResultCache.key

    def recording_key(self, path, *args):
        hashed.append(Path(path).name)  # the key of a file's bytes: the file was read
        return real_key(self, path, *args)

    monkeypatch.setattr(result_cache.ResultCache, "key", recording_key)
    pack_before = _pack(cache).read_bytes(), _pack(cache).stat().st_mtime_ns
    assert _in_process_scan(tmp_path, cache) == [("gpu.py", "ROCM001", 1)] and hashed == []
    assert (_pack(cache).read_bytes(), _pack(cache).stat().st_mtime_ns) == pack_before  # nothing new to write


def test_a_file_rewritten_with_its_size_and_modification_time_is_read_again(tmp_path, monkeypatch):
    """Its change time moved, which no program can set back: its signature is another."""
    import time

    import rocmlint.files.tree as tree_module

    monkeypatch.setattr(tree_module, "RACY_NANOSECONDS", 0)
    module = tmp_path / "gpu.py"
    module.write_text("import pynvml\nx = 1\n")
    cache = tmp_path / "cache"
    assert _in_process_scan(tmp_path, cache) == [("gpu.py", "ROCM001", 1)]
    before = module.stat()
    time.sleep(0.05)  # past the tick of the file system's clock the first write was in
    module.write_text("x = 1\nimport pynvml\n")  # the same size
    os.utime(module, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert module.stat().st_size == before.st_size and module.stat().st_mtime_ns == before.st_mtime_ns
    assert _in_process_scan(tmp_path, cache) == [("gpu.py", "ROCM001", 2)]
    assert list(_signature_lines(cache)) == [str(module)]  # the old signature is gone


def test_a_file_over_a_lowered_size_limit_is_said_so_though_its_result_is_kept(tmp_path, monkeypatch):
    """The size limit is not part of any key: a file found by its signature is still held to it."""
    import rocmlint.engine as engine
    import rocmlint.files.tree as tree_module
    from rocmlint.config import Config

    monkeypatch.setattr(tree_module, "RACY_NANOSECONDS", 0)
    (tmp_path / "gpu.py").write_text("import pynvml\n" + "x = 1\n" * 100)
    cache = tmp_path / "cache"
    assert _in_process_scan(tmp_path, cache) == [("gpu.py", "ROCM001", 1)]
    assert _signature_lines(cache)

    def scan(cache_dir: str | None):
        config = Config(root=tmp_path, max_file_size=64)
        return engine.scan(engine.ScanRequest([tmp_path], engine.select_checks(preview=True), config, jobs=1, cache_dir=cache_dir))

    kept, fresh = scan(str(cache)), scan(None)
    assert kept.findings == fresh.findings == []
    assert [(Path(p.path).name, p.reason) for p in kept.problems] == [(Path(p.path).name, p.reason) for p in fresh.problems]
    assert [Path(p.path).name for p in fresh.problems] == ["gpu.py"] and "size limit" in fresh.problems[0].reason


def test_a_file_changed_just_before_it_was_read_keeps_no_signature(tmp_path):
    """Changed within two seconds of the read, it could change again within the same tick and
    keep its signature with other bytes: its result is kept by its bytes only."""
    (tmp_path / "gpu.py").write_text("import pynvml\n")
    cache = tmp_path / "cache"
    assert _in_process_scan(tmp_path, cache) == [("gpu.py", "ROCM001", 1)]
    assert _signature_lines(cache) == {} and _entries(cache)
    assert _in_process_scan(tmp_path, cache) == [("gpu.py", "ROCM001", 1)]


# --- a cache the scanned tree cannot write ------------------------------------------------------

GIT = ["git", "-c", "user.name=rocmlint tests", "-c", "user.email=tests@localhost", "-c", "commit.gpgsign=false"]


def _findings(output: str) -> list:
    return json.loads(output)["findings"]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_committed_cache_cannot_hide_findings(tmp_path):
    """A checkout that carries `.rocmlint_cache` with entries that say "no findings" (anyone
    with the same rocmlint can compute their keys) does not change what its scan reports."""
    tree = tmp_path / "app"
    shutil.copytree(SAMPLE, tree)
    subprocess.run(["git", "init", "-q"], cwd=tree, check=True)
    cold = _scan(tree)
    assert _findings(cold)
    planted = tree / ".rocmlint_cache"
    _scan(tree, cache=tmp_path / "made")  # the entries a scan of this tree keeps, crafted below
    shutil.copytree(tmp_path / "made", planted)
    assert _rewrite(planted, lambda key, data: {**data, "findings": []})
    subprocess.run([*GIT, "add", "-A", "-f", "."], cwd=tree, check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", "planted"], cwd=tree, check=True)
    xdg = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    # The default folder is outside the tree: the planted one is not read.
    proc = run_cli("scan", ".", "--format", "json", "--show-gated", "--exit-zero", cwd=tree, env=xdg)
    assert proc.stdout == cold and proc.stderr == ""
    # Named, by option or environment: a folder git tracks files in keeps nothing, and says so.
    for options, env in ((("--cache-dir", ".rocmlint_cache"), xdg), ((), {**xdg, "ROCMLINT_CACHE_DIR": str(planted)})):
        proc = run_cli("scan", ".", "--format", "json", "--show-gated", "--exit-zero", *options, cwd=tree, env=env)
        assert proc.stdout == cold
        assert proc.stderr.count("\n") == 1 and "results are not kept in" in proc.stderr and "git tracks files in it" in proc.stderr
    assert all(not entry["findings"] for entry in _entries(planted).values())  # nor written to


def test_a_cache_folder_of_another_user_is_never_used(tmp_path, monkeypatch):
    from rocmlint.files import result_cache

    folder = tmp_path / "cache"
    folder.mkdir()
    result_cache.refusal.cache_clear()
    assert result_cache.refusal(str(folder)) is None
    monkeypatch.setattr(os, "geteuid", lambda: folder.stat().st_uid + 1, raising=False)
    result_cache.refusal.cache_clear()
    try:
        assert result_cache.refusal(str(folder)) == "it belongs to another user"
        cache = result_cache.ResultCache(folder, "salt" * 4)
        cache.put("ab" * 20, "a.py", [], [], [])
        cache.save()
        assert cache.get("ab" * 20) is None and list(folder.iterdir()) == []
    finally:
        result_cache.refusal.cache_clear()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give a folder away")
def test_the_cli_says_why_a_folder_of_another_user_is_not_used(tmp_path):
    tree = tmp_path / "app"
    shutil.copytree(SAMPLE, tree)
    folder = tmp_path / "theirs"
    folder.mkdir()
    os.chown(folder, 54321, 54321)
    proc = run_cli("scan", ".", "--format", "json", "--show-gated", "--exit-zero", "--cache-dir", str(folder), cwd=tree)
    assert proc.stdout == _scan(tree)
    assert proc.stderr == f"rocmlint: results are not kept in {folder}: it belongs to another user\n"
    assert list(folder.iterdir()) == []


# --- links and special files in the cache folder -------------------------------------------------


def _guarded_scan(cwd: Path, cache: Path) -> str:
    """A scan with a timeout: a cache file that is a pipe or a device must not hang it."""
    proc = subprocess.run(
        [sys.executable, "-m", "rocmlint", "scan", ".", "--format", "json", "--show-gated", "--exit-zero", "--cache-dir", str(cache)],
        cwd=cwd, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


# Runs a scan and reports its peak memory (ru_maxrss: KiB on Linux) on the last line of stderr.
_MEASURED = (
    "import resource, sys\n"
    "from rocmlint.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "sys.stdout.flush()\n"
    "sys.stderr.write('peak %d\\n' % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    "sys.exit(code)\n"
)


def _limit_memory():
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # a regression fails, not the machine


@pytest.mark.parametrize("kind", ["dev-zero", "fifo"])
@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss in KiB, /dev/zero")
def test_the_pack_is_read_only_when_it_is_a_regular_file(tmp_path, kind):
    tree = tmp_path / "app"
    shutil.copytree(SAMPLE, tree)
    cold = _scan(tree)
    cache = tmp_path / "cache"
    cache.mkdir()
    for name in ("results.pack", "unmarked.json"):  # the pack, and the key list of older versions
        if kind == "fifo":
            os.mkfifo(cache / name)
        else:
            os.symlink("/dev/zero", cache / name)
    for _ in range(2):
        proc = subprocess.run(
            [sys.executable, "-c", _MEASURED, "scan", ".", "--format", "json", "--show-gated", "--exit-zero", "--cache-dir", str(cache)],
            cwd=tree, capture_output=True, text=True, timeout=120, preexec_fn=_limit_memory,
        )
        assert proc.returncode == 0 and proc.stdout == cold, proc.stderr
        peak_kib = int(proc.stderr.splitlines()[-1].split()[1])
        assert peak_kib < 1 << 20, f"{peak_kib} KiB: the link was read"  # /dev/zero read until memory ran out


def test_a_pack_that_is_a_link_is_neither_read_nor_written_through(tmp_path):
    tree = tmp_path / "app"
    shutil.copytree(SAMPLE, tree)
    made = tmp_path / "made"
    cold = _scan(tree, cache=made)
    assert _rewrite(made, lambda key, data: {**data, "findings": []})  # a crafted pack with no findings
    crafted = tmp_path / "outside" / "results.pack"
    crafted.parent.mkdir()
    shutil.copy(_pack(made), crafted)
    before = crafted.read_bytes()
    cache = tmp_path / "cache"
    cache.mkdir()
    os.symlink(crafted, _pack(cache))
    assert _guarded_scan(tree, cache) == cold
    assert crafted.read_bytes() == before  # replaced by rename: the link goes, its target stays
    assert not _pack(cache).is_symlink() and _entries(cache)
    assert _guarded_scan(tree, cache) == cold


def test_a_dangling_link_in_the_cache_folder_makes_no_file_outside_it(tmp_path):
    tree = tmp_path / "app"
    shutil.copytree(SAMPLE, tree)
    cache = tmp_path / "cache"
    cache.mkdir()
    target = tmp_path / "outside" / "created-by-rocmlint"
    target.parent.mkdir()
    os.symlink(target, cache / ".gitignore")
    os.symlink(tmp_path / "outside" / "tag", cache / "CACHEDIR.TAG")
    os.symlink(tmp_path / "outside" / "pack", cache / "results.pack")
    assert _guarded_scan(tree, cache) == _scan(tree)
    assert list(target.parent.iterdir()) == [] and _entries(cache)


# --- entries of the right syntax and the wrong shape ------------------------------------------

# A value of another JSON type than each kind of field holds (bool is not taken for a number).
# None is left out where a field may be None (a gate, a fix, a problem's line).
_WRONG = {str: [1, ["x"], {}], int: ["7", True, 1.5], bool: [1, "true", None], list: [{}, "x", 3], type(None): [[], True]}


def _leaves(value, where=()):
    """(path, value) of every field of a decoded entry, containers included."""
    yield where, value
    if isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, where + (index,))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, where + (key,))


def _replaced(entry, where, new):
    import copy

    tampered = copy.deepcopy(entry)
    target = tampered
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = new
    return tampered


def _kept_entry(tmp_path):
    """A cache with one kept result holding every kind of field: a fix with edits, a gate, the
    context lines, a problem with a line, and a question (with a list among its arguments)
    whose answer still holds. Returns (a function that writes a value for the entry's key and
    reads it back through a new ResultCache, the entry decoded, the finding and problem)."""
    from rocmlint.files import result_cache
    from rocmlint.findings import Edit, Finding, Fix, Problem
    from rocmlint.python.gates import declared_dependency

    folder = tmp_path / "cache"
    cache = result_cache.ResultCache(folder, "salt")
    finding = Finding(
        "a.py", "ROCM001", "message", "error", 3, 0, 3, 12, Fix("title", "safe", (Edit(5, 9, "new", 3, 5, 3, 9),)),
        gate="why", gate_fixed=True, context={3: "import pynvml"},
    )
    problem = Problem("a.py", "reason", 3, False)
    key = cache.key("a.py", "python", b"data", False)
    arguments = [str(tmp_path / "a.py"), ["nvidia-ml-py", "pynvml"]]
    questions = [["rocmlint.python.gates:declared_dependency", arguments, declared_dependency(*arguments)]]
    cache.put(key, "a.py", questions, [finding], [problem])
    cache.save()
    (line,) = _lines(folder)
    entry = json.loads(line.split(b"\t", 5)[5])

    def kept_with(value: bytes):
        fields = line.split(b"\t", 5)
        _pack(folder).write_bytes(b"rocmlint-results\t2\t1\n" + b"\t".join([*fields[:5], value]) + b"\n")
        result_cache._LOADED.clear()
        return result_cache.ResultCache(folder, "salt").get(key)

    assert kept_with(json.dumps(entry).encode()) == ([finding], [problem])
    return kept_with, entry, (finding, problem)


def test_keys_name_the_file_by_its_path_as_given_and_its_absolute_path(tmp_path, monkeypatch):
    # check_file hands in the absolute path it has worked out already: the keys must be those
    # the cache works out itself, and the same relative path from another folder another key.
    from rocmlint.files.result_cache import ResultCache

    cache = ResultCache(tmp_path / "cache", "salt")
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
    absolute, signature = str(tmp_path / "one" / "a.py"), (1, 2, 3, 4)
    monkeypatch.chdir(tmp_path / "one")
    assert cache.key("a.py", "python", b"x", False, absolute) == cache.key("a.py", "python", b"x", False)
    assert cache.signature_key("a.py", "python", False, signature, absolute) == cache.signature_key("a.py", "python", False, signature)
    monkeypatch.chdir(tmp_path / "two")
    assert cache.key("a.py", "python", b"x", False, absolute) != cache.key("a.py", "python", b"x", False)
    assert cache.signature_key("a.py", "python", False, signature, absolute) != cache.signature_key("a.py", "python", False, signature)


def test_entries_whose_fields_have_another_type_are_misses(tmp_path):
    kept_with, entry, (finding, problem) = _kept_entry(tmp_path)
    tampered_fields = 0
    for where, value in list(_leaves(entry))[1:]:
        for new in _WRONG.get(type(value), [None]):
            kept = kept_with(json.dumps(_replaced(entry, where, new)).encode())
            if where[0] == "questions":
                # Asked again: a miss, or the same result where the other question has the same
                # answer (declared_dependency(None, ...) is None as well); never an exception.
                assert kept in (None, ([finding], [problem])), (where, new)
            else:
                assert kept is None, (where, new)
            tampered_fields += 1
    assert tampered_fields > 100
    assert kept_with(json.dumps(entry).encode()) == ([finding], [problem])


def test_an_entry_whose_finding_names_no_check_is_a_miss(tmp_path):
    # The reports look each finding's check up by its id (SARIF's ruleIndex raised KeyError on "").
    kept_with, entry, (finding, problem) = _kept_entry(tmp_path)
    for not_an_id in ("", "rocm003", "ROCM3", "ROCM0031", "E501"):
        tampered = json.loads(json.dumps(entry))
        tampered["findings"][0][1] = not_an_id
        assert kept_with(json.dumps(tampered).encode()) is None, not_an_id


def test_a_scan_over_entries_of_every_wrong_type_equals_a_cold_scan(tmp_path):
    import random

    tree = tmp_path / "app"
    shutil.copytree(SAMPLE, tree)
    cache = tmp_path / "cache"
    cold = _scan(tree, cache=cache)
    originals = _entries(cache)
    pack = _pack(cache).read_bytes()
    chooser = random.Random(26)
    for _ in range(3):
        _pack(cache).write_bytes(pack)

        def tampered(key, data):
            where, value = chooser.choice(list(_leaves(originals[key]))[1:])
            return _replaced(originals[key], where, chooser.choice(_WRONG.get(type(value), [None])))

        assert _rewrite(cache, tampered) == len(originals)
        assert _scan(tree, cache=cache) == cold


def test_an_entry_over_the_size_cap_is_neither_written_nor_read(tmp_path, monkeypatch):
    from rocmlint.files import result_cache

    kept_with, entry, (finding, problem) = _kept_entry(tmp_path)
    encoded = json.dumps(entry, separators=(",", ":")).encode()
    monkeypatch.setattr(result_cache, "_MAX_ENTRY_BYTES", len(encoded) - 1)
    assert kept_with(encoded) is None
    cache = result_cache.ResultCache(tmp_path / "other", "salt")
    cache.put(cache.key("a.py", "python", b"data", False), "a.py", entry["questions"], [finding], [problem])
    cache.save()
    assert not (tmp_path / "other").exists()  # nothing made, nothing written


# --- what the pack keeps: pruning, a size bound, concurrent scans --------------------------------


def _size_without_signatures(cache: Path) -> int:
    return sum(len(line) + 1 for line in _lines(cache) if not line.startswith(b"S"))


def _paths_kept(cache: Path) -> list[str]:
    return sorted(json.loads(line.split(b"\t", 5)[4]) for line in _lines(cache) if line.startswith(b"F"))


def test_edits_do_not_grow_the_cache_and_gone_files_leave_it(tmp_path):
    """Each round of edits replaces the entries of the files edited: the pack stays the size of
    one scan's results (it only grew before: one file per entry, never removed)."""
    tree = tmp_path / "app"
    shutil.copytree(SAMPLE, tree)
    cache = tmp_path / "cache"
    _scan(tree, cache=cache)
    first_paths, first_size = _paths_kept(cache), _size_without_signatures(cache)
    edited = sorted(p for p in tree.rglob("*.py") if "torch" in p.read_text())[:2]
    assert len(edited) == 2
    sizes = []
    for round_ in range(6):
        for path in edited:
            path.write_text(path.read_text() + f"\n# edit round {round_}\n")  # new bytes, the same findings
        assert _scan(tree, cache=cache) == _scan(tree)
        sizes.append(_size_without_signatures(cache))
        assert _paths_kept(cache) == first_paths  # one entry per file, whatever the rounds
        # At most one signature per file (a file gets one once it has settled: the copies
        # settle while the rounds run, so their number is not compared).
        signed = list(_signature_lines(cache))
        assert len(signed) == len(set(signed)) and set(signed) <= set(first_paths)
    assert max(sizes) - min(sizes) < 512 and max(sizes) < first_size + 4096, (first_size, sizes)
    # A file that is gone leaves the pack with the next scan that writes it.
    gone = edited[0]
    gone.unlink()
    assert _scan(tree, cache=cache) == _scan(tree)
    assert str(gone) not in _paths_kept(cache) and str(edited[1]) in _paths_kept(cache)


def test_scans_of_other_folders_and_checks_share_the_pack(tmp_path):
    """Entries of files another scan checked (another folder, other checks) stay; only an
    older entry of a file this scan checked with the same checks is replaced."""
    tree = tmp_path / "app"
    shutil.copytree(SAMPLE, tree)
    cache = tmp_path / "cache"
    _scan(tree, cache=cache)
    everything = _paths_kept(cache)
    _scan(tree / "fastllm", "--select", "ROCM0", cache=cache)
    assert _paths_kept(cache) == sorted(everything + [p for p in everything if "/fastllm/" in p])
    assert _scan(tree, cache=cache) == _scan(tree)
    assert _scan(tree / "fastllm", "--select", "ROCM0", cache=cache) == _scan(tree / "fastllm", "--select", "ROCM0")


def test_the_pack_is_kept_below_its_size_bound(tmp_path, monkeypatch):
    from rocmlint.files import result_cache

    import rocmlint.engine as engine
    from rocmlint.config import Config

    tree = tmp_path / "app"
    shutil.copytree(SAMPLE, tree)
    cache = tmp_path / "cache"
    checks = engine.select_checks(preview=True)

    def scan(path):
        request = engine.ScanRequest([path], checks, Config(root=tree), jobs=1, cache_dir=str(cache))
        return engine.scan(request)

    full = scan(tree)
    size = _pack(cache).stat().st_size
    shutil.rmtree(cache)
    result_cache._LOADED.clear()
    monkeypatch.setattr(result_cache, "_PACK_TARGET", size // 2)
    assert scan(tree) == full
    assert _pack(cache).stat().st_size <= size // 2
    kept_before = set(_paths_kept(cache))
    # The files a scan used are kept first; what else fits, the most recently used first.
    assert scan(tree / "fastllm") == scan(tree / "fastllm")
    fastllm = {p for p in _paths_kept(cache) if "/fastllm/" in p}
    assert fastllm and fastllm <= set(_paths_kept(cache)) and _pack(cache).stat().st_size <= size // 2
    assert kept_before


def test_scans_at_once_with_one_cache_folder_each_say_what_a_cold_scan_says(tmp_path):
    trees = []
    for name in ("nvidia_app", "rocm_port"):
        tree = tmp_path / name
        shutil.copytree(REPO / "sample_repos" / name, tree)
        trees.append(tree)
    colds = [_scan(tree) for tree in trees]
    cache = tmp_path / "cache"
    command = [sys.executable, "-m", "rocmlint", "scan", ".", "--format", "json", "--show-gated", "--exit-zero", "--cache-dir", str(cache)]
    for round_ in range(3):
        if round_ == 2:  # the files change between rounds: every scan writes again
            for tree in trees:
                for path in sorted(tree.rglob("*.py"))[:3]:
                    path.write_text(path.read_text() + "\n# changed\n")
            colds = [_scan(tree) for tree in trees]
        running = [
            (index, subprocess.Popen(command, cwd=trees[index], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
            for index in (0, 1, 0, 1, 0, 1)
        ]
        for index, process in running:
            out, err = process.communicate(timeout=300)
            assert process.returncode == 0 and "Traceback" not in err, err
            assert out == colds[index]
        assert not [p.name for p in cache.iterdir() if p.name.startswith(".tmp-")]
        assert _pack(cache).read_bytes().startswith(b"rocmlint-results\t2\t")
    for tree, cold in zip(trees, colds):
        assert _scan(tree, cache=cache) == cold


def test_the_cache_folder_is_tagged_as_the_cache_directory_tagging_specification_says(tmp_path):
    tree = tmp_path / "app"
    shutil.copytree(SAMPLE, tree)
    xdg = tmp_path / "xdg"
    run_cli("scan", ".", "--format", "json", "--exit-zero", cwd=tree, env={"XDG_CACHE_HOME": str(xdg)})
    (kept,) = (xdg / "rocmlint" / "results").iterdir()
    # https://bford.info/cachedir/: the file starts with exactly these 43 bytes.
    for folder in (kept, xdg / "rocmlint"):
        assert (folder / "CACHEDIR.TAG").read_bytes()[:43] == b"Signature: 8a477f597d28d172789f06886806bc55"


def test_what_older_versions_kept_in_the_folder_is_removed_by_the_next_write(tmp_path):
    tree = tmp_path / "app"
    shutil.copytree(SAMPLE, tree)
    cache = tmp_path / "cache"
    legacy = cache / "ab"
    legacy.mkdir(parents=True)
    (legacy / ("c" * 38 + ".json")).write_text("{}")
    (cache / "unmarked.json").write_text("[]")
    (cache / "notes.txt").write_text("someone else's")
    (legacy / "kept.txt").write_text("someone else's")
    assert _scan(tree, cache=cache) == _scan(tree)
    assert sorted(p.name for p in cache.iterdir()) == [".gitignore", "CACHEDIR.TAG", "ab", "notes.txt", "results.pack"]
    assert [p.name for p in legacy.iterdir()] == ["kept.txt"]


def test_clean_removes_this_projects_kept_results_and_nothing_else(tmp_path):
    tree = tmp_path / "app"
    shutil.copytree(SAMPLE, tree)
    xdg = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    other = tmp_path / "other"
    shutil.copytree(SAMPLE, other)
    for folder in (tree, other):
        run_cli("scan", ".", "--format", "json", "--exit-zero", cwd=folder, env=xdg)
    results = tmp_path / "xdg" / "rocmlint" / "results"
    assert len(list(results.iterdir())) == 2
    proc = run_cli("clean", cwd=tree, env=xdg)
    assert proc.returncode == 0 and proc.stdout.startswith("Removed 3 files (") and proc.stdout.rstrip().endswith(".")
    assert len(list(results.iterdir())) == 1  # the other project's results stay
    proc = run_cli("clean", cwd=tree, env=xdg)
    assert proc.returncode == 0 and proc.stdout.startswith("Nothing to remove: no results kept in ")
    # A folder rocmlint did not make is never touched; nor one git tracks files in.
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "results.pack").write_text("my data")
    proc = run_cli("clean", "--cache-dir", str(mine), cwd=tree, env=xdg)
    assert proc.returncode == 2 and "not a folder of rocmlint's results" in proc.stderr
    assert (mine / "results.pack").read_text() == "my data"
    named = tmp_path / "named"
    run_cli("scan", ".", "--format", "json", "--exit-zero", "--cache-dir", str(named), cwd=tree, env=xdg)
    (named / "notes.txt").write_text("mine")
    proc = run_cli("clean", "--cache-dir", str(named), cwd=tree, env=xdg)
    assert proc.returncode == 0 and [p.name for p in named.iterdir()] == ["notes.txt"]
    # --all: every project's results and the parsed check catalogs; the folders once empty.
    assert list((tmp_path / "xdg" / "rocmlint").glob("catalog-*.json"))
    proc = run_cli("clean", "--all", cwd=tree, env=xdg)
    assert proc.returncode == 0 and proc.stdout.startswith("Removed ")
    assert not (tmp_path / "xdg" / "rocmlint").exists()
    assert run_cli("scan", ".", "--format", "json", "--show-gated", "--exit-zero", cwd=tree, env=xdg).stdout == _scan(tree)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_clean_never_touches_a_folder_git_tracks_files_in(tmp_path):
    tree = tmp_path / "app"
    shutil.copytree(SAMPLE, tree)
    made = tmp_path / "made"
    _scan(tree, cache=made)
    planted = tree / "kept"
    shutil.copytree(made, planted)
    subprocess.run(["git", "init", "-q"], cwd=tree, check=True)
    subprocess.run([*GIT, "add", "-A", "-f", "."], cwd=tree, check=True)
    proc = run_cli("clean", "--cache-dir", "kept", cwd=tree)
    assert proc.returncode == 2 and "git tracks files in it" in proc.stderr
    assert sorted(p.name for p in planted.iterdir()) == sorted(p.name for p in made.iterdir())


def test_a_ci_file_is_checked_again_when_its_project_starts_building_for_amd(tmp_path):
    """A CI file's result depends on whether its project builds for AMD (jobs on NVIDIA
    machines are gated there): a kept result is stale once a build file gains a ROCm side."""
    tree = tmp_path / "proj"
    (tree / "ci").mkdir(parents=True)
    (tree / "setup.py").write_text("COMPILER = 'nvcc'\n")
    (tree / "ci" / "pipeline.yaml").write_text(
        "jobs:\n  test:\n    runs-on: [self-hosted, h100]\n    steps:\n    - run: docker run --gpus all img\n"
    )
    cache = tmp_path / "cache"
    options = ("--select", "ROCM310", "--preview")
    nvidia = _scan(tree, *options, cache=cache)
    assert [f["line"] for f in _findings(nvidia)] == [5]
    (tree / "setup.py").write_text("COMPILER = 'hipcc'\n")
    warm = _scan(tree, *options, cache=cache)
    assert warm == _scan(tree, *options) != nvidia
    assert _findings(warm) == []


def test_an_entry_whose_finding_names_a_check_the_scan_does_not_run_is_a_miss(tmp_path):
    # A check's id, but of no check of this scan: the reports look it up among the scan's checks
    # (SARIF's ruleIndex raised KeyError on it).
    tree = tmp_path / "app"
    shutil.copytree(SAMPLE, tree)
    cache = tmp_path / "cache"
    cold = _scan(tree, "--format", "sarif", cache=cache)

    def renamed(key, entry):
        if not entry["findings"]:
            return None
        entry["findings"][0][1] = "ROCM999"
        return entry

    assert _rewrite(cache, renamed) > 0
    assert _scan(tree, "--format", "sarif", cache=cache) == cold
