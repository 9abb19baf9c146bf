"""Baselines: adopt rocmlint on a big legacy tree without fixing everything first.

`rocmlint scan --baseline FILE --write-baseline` records every current finding in FILE;
`rocmlint scan --baseline FILE` then reports only findings that are not in it. A finding is
recorded by its path (relative to the baseline file's folder, so the scan may run from anywhere),
its check id and its fingerprint (rocmlint.report.fingerprints), not by its line: code added or removed
above a recorded finding does not bring it back. Editing the flagged line, renaming the file or
adding another copy of the same line makes a new finding.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

FORMAT_VERSION = 1
# A baseline larger than this is not read: a million findings take about 150 MB.
_MAX_BYTES = 512 << 20


class BaselineError(ValueError):
    """The baseline file cannot be read or written; the message names it."""


def _key_path(path: str, base: Path) -> str:
    """A finding's path relative to the baseline's real folder, from the real path of the
    folder that holds it: a scan through a symbolic link to the tree (or to the baseline's
    folder) keys each finding as a scan of the tree itself does. The file's own name is kept
    as scanned (a link to a file is a file of its own)."""
    absolute = os.path.abspath(path)
    real = os.path.join(os.path.realpath(os.path.dirname(absolute)), os.path.basename(absolute))
    return os.path.relpath(real, str(base)).replace(os.sep, "/")


def _entries(findings, base: Path) -> list[dict]:
    from rocmlint.report.fingerprints import fingerprints  # here: a scan without a baseline never needs it

    prints = fingerprints(findings)
    return [
        {"path": _key_path(f.path, base), "code": f.check_id, "fingerprint": prints[id(f)]}
        for f in sorted(findings, key=lambda f: f.sort_key())
    ]


def write_baseline(path: Path, findings) -> int:
    entries = _entries(findings, path.resolve().parent)
    document = {"rocmlint-baseline": FORMAT_VERSION, "findings": entries}
    try:
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise BaselineError(f"--baseline {path}: cannot write: {exc.strerror or exc}") from exc
    return len(entries)


def read_baseline(path: Path) -> Counter:
    """The findings a baseline records. Only a regular file is read, opened without blocking
    (a named pipe or a device is refused, never waited on), and at most _MAX_BYTES of it; JSON
    nested too deeply to read is an error like any other bad baseline."""
    from rocmlint.files.discovery import ReadError, TooLarge, read_regular_file

    try:
        data = read_regular_file(str(path), _MAX_BYTES)
    except TooLarge:
        raise BaselineError(f"--baseline {path}: cannot read: larger than {_MAX_BYTES >> 20} MiB") from None
    except ReadError as exc:
        if not os.path.lexists(path):
            raise BaselineError(f"--baseline {path}: no such file (write one with --write-baseline)") from None
        raise BaselineError(f"--baseline {path}: {exc}") from None
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BaselineError(f"--baseline {path}: cannot read: {exc}") from None
    except RecursionError:
        raise BaselineError(f"--baseline {path}: cannot read: JSON nested too deeply") from None
    entries = document.get("findings") if isinstance(document, dict) else None
    version = document.get("rocmlint-baseline") if isinstance(document, dict) else None
    # `true == 1` in Python: the version must be the number itself.
    if type(version) is not int or version != FORMAT_VERSION or not isinstance(entries, list):
        raise BaselineError(f"--baseline {path}: not a rocmlint baseline (version {FORMAT_VERSION})")
    keys: Counter = Counter()
    for entry in entries:
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in ("path", "code", "fingerprint")):
            raise BaselineError(f"--baseline {path}: an entry without path, code and fingerprint: {_shown(entry)}")
        keys[(entry["path"], entry["code"], entry["fingerprint"])] += 1
    return keys


def _shown(entry) -> str:
    text = repr(entry)
    return text if len(text) <= 200 else text[:197] + "..."


def filter_baselined(findings: list, baseline: Counter, path: Path) -> tuple[list, int]:
    """(the findings not in the baseline, how many were in it)."""
    from rocmlint.report.fingerprints import fingerprints

    base = path.resolve().parent
    remaining = Counter(baseline)
    prints = fingerprints(findings)
    kept = []
    for f in findings:
        key = (_key_path(f.path, base), f.check_id, prints[id(f)])
        if remaining[key] > 0:
            remaining[key] -= 1
        else:
            kept.append(f)
    return kept, len(findings) - len(kept)


def _covered(entry_path: str, base: Path, scanned: list[Path]) -> bool:
    """Whether a recorded path (relative to the baseline's folder) is under one of `scanned`."""
    absolute = os.path.normpath(os.path.join(str(base), entry_path))
    for path in scanned:
        top = os.path.abspath(path)
        if absolute == top or absolute.startswith(top.rstrip(os.sep) + os.sep):
            return True
    return False


def entries_outside(baseline: Counter, path: Path, scanned: list[Path], check_ids: set[str]) -> Counter:
    """The recorded findings a scan of `scanned` with the checks `check_ids` cannot have seen:
    those of files outside the scanned paths, and those of checks that did not run. Writing a
    baseline keeps them, so that recording one folder does not forget the others."""
    base = path.resolve().parent
    return Counter(
        {key: count for key, count in baseline.items() if key[1] not in check_ids or not _covered(key[0], base, scanned)}
    )


def write_merged_baseline(path: Path, findings, kept: Counter) -> tuple[int, int]:
    """Record `findings` with the entries `kept` from the baseline already there. Returns
    (entries written, of which kept)."""
    entries = _entries(findings, path.resolve().parent)
    for (entry_path, code, fingerprint), count in sorted(kept.items()):
        entries.extend({"path": entry_path, "code": code, "fingerprint": fingerprint} for _ in range(count))
    entries.sort(key=lambda e: (e["path"], e["code"], e["fingerprint"]))
    document = {"rocmlint-baseline": FORMAT_VERSION, "findings": entries}
    try:
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise BaselineError(f"--baseline {path}: cannot write: {exc.strerror or exc}") from exc
    return len(entries), sum(kept.values())


def stale_entries(findings: list, baseline: Counter, path: Path, scanned: list[Path], check_ids: set[str]) -> int:
    """How many recorded findings of the scanned files and checks match no current finding:
    fixed, or their line changed. --write-baseline drops them."""
    from rocmlint.report.fingerprints import fingerprints

    base = path.resolve().parent
    remaining = baseline - entries_outside(baseline, path, scanned, check_ids)
    prints = fingerprints(findings)
    for f in findings:
        key = (_key_path(f.path, base), f.check_id, prints[id(f)])
        if remaining[key] > 0:
            remaining[key] -= 1
    return sum(remaining.values())
