"""Lock files: what `uv sync` installs, read from `uv.lock`.

A `uv.lock` is TOML written by `uv lock`: one `[[package]]` table per resolved distribution,
with its `version`, its `source` (`registry = URL`, `url`, `git`, `path`, `editable`, `virtual`),
the `dependencies` it pulls in (each with an optional environment `marker`) and, in a project
that forks its resolution (conflicting extras, per-platform indexes), the `resolution-markers`
it is chosen under. `uv sync` and `uv run` install exactly what the lock says for the machine's
platform; `pip install .` never reads it. Read with `tomllib`; positions are found in the text,
the tables being in document order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rocmlint.build.files import BuildView, file_gate, toml_table


@dataclass(frozen=True)
class LockedPackage:
    name: str
    version: str
    source: str  # the registry or URL it comes from ("" when local or virtual)
    dependencies: tuple[tuple[str, str], ...]  # (name, marker)
    resolution_markers: tuple[str, ...]
    start: int  # the span of the version's value (of the `[[package]]` header when none)
    end: int
    gate: str | None


_PACKAGE_HEADER = re.compile(r"(?m)^\[\[package\]\][ \t]*$")


def uv_lock_view(view: BuildView, source) -> None:
    data = toml_table(source.text)
    if data is None:
        return
    packages = data.get("package")
    if not isinstance(packages, list):
        return
    gate = file_gate(source.path)
    headers = [m.start() for m in _PACKAGE_HEADER.finditer(source.text)]
    if len(headers) != len(packages):
        headers = []  # written by hand or by another tool: no positions to trust but the first line
    for index, package in enumerate(packages):
        if not isinstance(package, dict) or not isinstance(package.get("name"), str):
            continue
        version = package.get("version") if isinstance(package.get("version"), str) else ""
        start = end = 0
        if headers:
            start = headers[index]
            stop = headers[index + 1] if index + 1 < len(headers) else len(source.text)
            end = start + len("[[package]]")
            written = re.compile(r'(?m)^version\s*=\s*"' + re.escape(version) + '"').search(source.text, start, stop) if version else None
            if written:
                start = written.start() + written.group(0).index('"') + 1
                end = start + len(version)
        origin = package.get("source") if isinstance(package.get("source"), dict) else {}
        where = next((str(origin[k]) for k in ("registry", "url", "git") if isinstance(origin.get(k), str)), "")
        dependencies = tuple(
            (str(d.get("name", "")), str(d.get("marker", "")))
            for d in package.get("dependencies", ()) if isinstance(d, dict)
        )
        markers = tuple(str(m) for m in package.get("resolution-markers", ()) if isinstance(m, str))
        view.locked.append(LockedPackage(package["name"], version, where, dependencies, markers, start, end, gate))
