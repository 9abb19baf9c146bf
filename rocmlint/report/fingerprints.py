"""Fingerprints that follow a finding when lines move.

A finding's fingerprint is a hash of its check id and the text of its first line with all
white space removed, and the count of earlier findings in the same file with the same hash
(`3f2a...:1`, `3f2a...:2`). Line numbers take no part, so code added or removed above a
finding leaves its fingerprint alone; editing the flagged line itself makes a new one. SARIF
(`partialFingerprints.primaryLocationLineHash`, which GitHub combines with the path and the
rule), GitLab Code Quality (`fingerprint`, with the path) and baselines use the same value.
"""

from __future__ import annotations

import hashlib
from typing import Iterable


def _line_hash(check_id: str, line_text: str) -> str:
    normalised = "".join(line_text.split())
    return hashlib.sha256(f"{check_id}\0{normalised}".encode("utf-8", "surrogatepass")).hexdigest()[:16]


def fingerprints(findings: Iterable) -> dict[int, str]:
    """id(finding) -> fingerprint. Occurrences count in (path, line, column) order."""
    counts: dict[tuple[str, str], int] = {}
    result: dict[int, str] = {}
    # Many findings on one long line (minified or generated code) would each hash the whole
    # line again: hash each (check, line text) once.
    hashes: dict[tuple[str, str], str] = {}
    for finding in sorted(findings, key=lambda f: f.sort_key()):
        text_key = (finding.check_id, finding.context.get(finding.line, ""))
        line_hash = hashes.get(text_key)
        if line_hash is None:
            line_hash = hashes[text_key] = _line_hash(*text_key)
        key = (finding.path, line_hash)
        counts[key] = counts.get(key, 0) + 1
        result[id(finding)] = f"{line_hash}:{counts[key]}"
    return result


def global_fingerprint(path: str, check_id: str, fingerprint: str) -> str:
    """One string that is unique across a whole report (GitLab wants that): path and all."""
    return hashlib.sha256(f"{path}\0{check_id}\0{fingerprint}".encode("utf-8", "surrogatepass")).hexdigest()
