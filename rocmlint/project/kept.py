"""The project pass kept between scans: a re-scan in which nothing it read has changed reads
no build file, header or module again.

The project pass (rocmlint.project.gating, then the preview gates) turns the hits of the
per-file pass into gated or reported ones by what the project says: its build files, the
include closure of its C/C++ files and their macros, the imports between its Python modules,
where projects start. What it gives is one gate (or none) for each hit and the problems it met,
and it depends on nothing but

- the hits and problems it is given, the checks, the configuration (`cuda-only`,
  `rocm-sources`, `max-file-size`, preview), the folders scanned, the current folder, the home
  folder and git's environment: all of these make the key of a kept pass;
- the files it reads and the folders it walks. Every file it reads goes through
  rocmlint.files.tree.ProjectFiles and every whole-tree walk says where it starts, so the pass
  is recorded as it runs (rocmlint.files.tree.Reading): each file read (a hash of its bytes and
  its signature), each tree walked (a hash of every name in it, listed before the walk), and
  in every folder above those trees and above each hit's file, the names the climb to a
  project's start asks about (NAMES_ASKED_ABOVE: build files, `pyproject.toml`, `.git`,
  `__init__.py`).

A kept pass is used only when its key is the same and everything it recorded reads the same
now (rocmlint.files.tree.still_read_the_same): a changed, added or removed build file, header,
module or configuration, a new CMakeLists.txt the pass would now read, a file renamed or turned
into a link, gives a pass run afresh. Checking costs a listing of each tree and a `stat` of each
file read; a file is read again only when its signature changed (then its bytes decide) or it
was changed within two seconds of being read (RACY_NANOSECONDS).

The pass kept is the last one of each set of options and folders (the slot), in the pack of
the scan's cache folder (rocmlint.files.result_cache). Before a recorded pass, the answers
rocmlint keeps in memory about the tree are forgotten, so that everything the pass depends on
is read, and recorded, while it runs.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Callable

from rocmlint.files.project_start import NAMES_ASKED_ABOVE
from rocmlint.files import tree
from rocmlint.findings import Finding, Problem
from rocmlint.records import replace

_FORMAT = 1
# What else the pass reads from the environment: where the home folder is (no project starts
# there or above it) and what git is told (whether a folder is in a work tree).
_ENVIRONMENT = ("GIT_DIR", "GIT_WORK_TREE", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM", "ROCMLINT_NO_GIT")


def kept_project_pass(
    cache, run: Callable[[list[Finding], dict | None], list[Finding]], findings: list[Finding], problems: list[Problem],
    known: dict | None, config, scanned, started: int, reading: tree.Reading | None = None,
) -> list[Finding]:
    """`run(findings, known)` (the project pass of one scan: it gates hits and may add to
    `problems`), or what it gave the last time when nothing it read has changed (see the
    module docstring). `known`: C/C++ directives the per-file pass read (absolute path ->
    FileDirectives), since `started` (time.time_ns()); `cache`: a ResultCache. `reading`: the
    recording of a pass that began before the per-file pass ended (start_recorded_pass; there
    was no pass kept for these options), which `run` finishes."""
    from rocmlint.files.result_cache import _finding_json

    slot = _slot(cache, config, scanned)
    inputs = json.dumps(
        [[_finding_json(f) for f in findings], [[p.path, p.reason, p.line, p.internal] for p in problems]],
        separators=(",", ":"),
    )
    key = _digest(slot + inputs)
    record = cache.project_record(slot) if reading is None else None
    if record is not None:
        kept = _kept_result(record, key, findings, cache.directory)
        if kept is not None:
            gates, added, settled = kept
            if settled:
                cache.keep_project_record(slot, record)  # its files are not read again next time
            problems.extend(added)
            return [f if f.gate == gate else replace(f, gate=gate) for f, gate in zip(findings, gates)]
    given = list(findings)  # the pass replaces hits in the list it is given
    before = len(problems)
    if reading is None:
        reading = start_recorded_pass(cache)
    try:
        reading.note_folders(os.path.dirname(os.path.abspath(f.path)) for f in given)
        for path in sorted(known or ()):
            reading.note_known(path, started, lambda data, path=path: _directives_of(data) == known[path])
        hits = run(findings, known)
    finally:
        tree.stop_reading()
    if reading.keepable and len(hits) == len(given) and all(_same_hit(a, b) for a, b in zip(given, hits)):
        reasons: dict[str, int] = {}
        gates = [-1 if h.gate is None else reasons.setdefault(h.gate, len(reasons)) for h in hits]
        cache.keep_project_record(slot, {
            "format": _FORMAT,
            "key": key,
            "read": reading.as_json(),
            "reasons": list(reasons),
            "gates": gates,
            "problems": [[p.path, p.reason, p.line, p.internal] for p in problems[before:]],
        })
    return hits


def has_kept_pass(cache, config, scanned) -> bool:
    """Whether a pass is kept for these options and folders (it may or may not still hold; a
    damaged one is found so by kept_project_pass, which then runs the pass)."""
    return cache.has_project_record(_slot(cache, config, scanned))


def start_recorded_pass(cache) -> tree.Reading:
    """Record what a project pass reads from now on, after forgetting what rocmlint keeps in
    memory about the tree (so that everything the pass depends on is read, and recorded)."""
    tree.forget_what_was_read_from_disk()
    return tree.start_reading(NAMES_ASKED_ABOVE, cache.directory)


def _slot(cache, config, scanned) -> str:
    return _digest(json.dumps(_options(cache.salt, config, scanned)))


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _options(salt: str, config, scanned) -> list:
    """What the pass depends on besides its hits and the files: the slot of a kept pass."""
    folders = [[os.path.abspath(p), os.path.isdir(p)] for p in scanned or ()]
    return [
        _FORMAT, salt, repr(config), os.path.realpath(config.root), folders, os.getcwd(), os.path.expanduser("~"),
        [os.environ.get(name) for name in _ENVIRONMENT],
    ]


def _directives_of(data: bytes):
    """What the per-file pass hands the project pass of a C/C++ file (engine.check_file reads
    its text as source_of does)."""
    from rocmlint.project.includes import file_directives

    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return file_directives(text)


def _same_hit(given: Finding, gated: Finding) -> bool:
    """Whether the pass gave back the same hit (its gate aside): then a kept gate applies to
    it by its place in the list."""
    return (given.path, given.check_id, given.line, given.col, given.message) == (
        gated.path, gated.check_id, gated.line, gated.col, gated.message
    )


def _kept_result(record: dict, key: str, findings: list[Finding], unlisted: str) -> tuple[list[str | None], list[Problem], bool] | None:
    """(the gate of each hit, the problems added, whether files read again have settled: see
    still_read_the_same) of a kept pass that holds, or None: for other hits or options, of
    another shape, or when something it read has changed."""
    try:
        if record.get("format") != _FORMAT or record.get("key") != key:
            return None
        reasons, gates, added = record["reasons"], record["gates"], record["problems"]
        if not (type(reasons) is list and all(type(r) is str for r in reasons)):
            return None
        if not (type(gates) is list and len(gates) == len(findings)):
            return None
        if not all(type(g) is int and -1 <= g < len(reasons) for g in gates):
            return None
        if not (type(added) is list and all(_is_problem(p) for p in added)):
            return None
        holds = tree.still_read_the_same(record["read"], NAMES_ASKED_ABOVE, unlisted)
        if holds is False:
            return None
    except (KeyError, TypeError, AttributeError):
        return None
    return [None if g == -1 else reasons[g] for g in gates], [Problem(*p) for p in added], holds is None


def _is_problem(item) -> bool:
    return (
        type(item) is list and len(item) == 4 and type(item[0]) is str and type(item[1]) is str
        and (item[2] is None or type(item[2]) is int) and type(item[3]) is bool
    )
