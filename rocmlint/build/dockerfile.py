"""Dockerfiles and Containerfiles: base images, ENV and ARG settings, and the shell of `RUN`.

Instructions come from `dockerfile-parse` (line continuations, comments between continued
lines, ARG defaults). It reads the lines of a heredoc (`RUN <<EOF ... EOF`) as instructions of
their own, so they are put back into their `RUN` here. `RUN` bodies are read as shell
(`rocmlint.build.shell`), with Dockerfile comment lines blanked, so that positions stay offsets
into the Dockerfile.

Gates: the file's name (`Dockerfile.rocm`, `cuda.Dockerfile`), and stages: in a Dockerfile
that has both a stage named for ROCm and one named for CUDA (`FROM rocm/pytorch AS base-rocm`,
`FROM nvidia/cuda:12.4.1-devel AS base-cuda`, picked with `FROM base-${GPU}`), each stage named
for one stack is that stack's.
"""

from __future__ import annotations

import io
import re

from rocmlint.build.files import BuildView, Image, Setting, blank_outside, join_gates, shell_code, stack_of_name

_HEREDOC = re.compile(r"<<-?\s*[\"']?([A-Za-z_][A-Za-z0-9_]*)[\"']?")
_FLAG = re.compile(r"--[a-z-]+=\S+\s+")
_REFERENCE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)(?::?-[^}]*)?\}?")
_PAIR = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*)=(\"(?:[^\"\\]|\\.)*\"|'[^']*'|[^\s\\]*)")


def _instructions(text: str) -> list[dict]:
    from dockerfile_parse import DockerfileParser

    parser = DockerfileParser(fileobj=io.BytesIO(text.encode("utf-8")), env_replace=False)
    structure = [dict(item) for item in parser.structure]
    lines = text.split("\n")
    merged: list[dict] = []
    skip_until = -1
    for item in structure:
        if item["startline"] <= skip_until:
            continue
        merged.append(item)
        if item["instruction"] in ("RUN", "COPY") and "<<" in item["value"]:
            for match in _HEREDOC.finditer(item["value"]):
                terminator = match.group(1)
                for number in range(item["endline"] + 1, len(lines)):
                    if lines[number].strip() == terminator:
                        item.setdefault("heredoc", []).append((item["endline"] + 1, number - 1))
                        skip_until = max(skip_until, number)
                        item["endline"] = number
                        break
    return merged


def read_dockerfile(view: BuildView, source, file_gate: str | None) -> None:
    try:
        instructions = _instructions(source.text)
    except Exception:  # a malformed Dockerfile is read as far as it goes: nothing here
        return
    text = source.text
    starts = source.line_starts
    arguments: dict[str, tuple[str, int, int]] = {}  # global ARG defaults: name -> (value, start, end)
    stage_names = []
    for item in instructions:
        if item["instruction"] == "FROM":
            words = _FLAG.sub("", item["value"]).split()
            if len(words) >= 3 and words[1].lower() == "as":
                stage_names.append(words[2])
    stacks = {stack_of_name(name) for name in stage_names}
    per_stage = "rocm" in stacks and "cuda" in stacks
    stage_gate: str | None = None
    seen_from = False
    for item in instructions:
        kind = item["instruction"]
        first, last = item["startline"], item["endline"]
        if first >= len(starts):
            continue
        start = starts[first]
        end = starts[last] + len(source.lines[last]) if last < len(starts) else len(text)
        raw = text[start:end]
        if kind == "FROM":
            seen_from = True
            words = _FLAG.sub("", item["value"]).split()
            if not words:
                continue
            stage_gate = None
            if per_stage and len(words) >= 3 and words[1].lower() == "as":
                stack = stack_of_name(words[2])
                if stack:
                    stage_gate = f"in the stage `{words[2]}`, which is for {'ROCm' if stack == 'rocm' else ('CUDA' if stack == 'cuda' else 'another platform')}"
            gate = join_gates(file_gate, stage_gate)
            ref = words[0]
            at = raw.find(ref)
            position = (start + at, start + at + len(ref)) if at >= 0 else (start, end)
            if "$" in ref:
                reference = _REFERENCE.fullmatch(ref)
                if reference and reference.group(1) in arguments:
                    value, value_start, value_end = arguments[reference.group(1)]
                    view.images.append(Image(value, value_start, value_end, gate))
                    continue
                ref = _REFERENCE.sub(lambda m: arguments.get(m.group(1), ("", 0, 0))[0], ref)
            view.images.append(Image(ref, position[0], position[1], gate))
            continue
        gate = join_gates(file_gate, stage_gate)
        if kind in ("ENV", "ARG"):
            body_start = start + len(raw) - len(raw.lstrip()) + len(kind)
            body = text[body_start:end]
            pairs = list(_PAIR.finditer(body))
            if pairs:
                for pair in pairs:
                    value, value_start = pair.group(2), body_start + pair.start(2)
                    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                        value, value_start = value[1:-1], value_start + 1
                    view.settings.append(Setting(pair.group(1), value, value_start, value_start + len(value), gate, kind.lower()))
                    if kind == "ARG" and not seen_from:
                        arguments[pair.group(1)] = (value, value_start, value_start + len(value))
            elif kind == "ENV":
                legacy = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s+(.+?)\s*$", body)
                if legacy:
                    value_start = body_start + legacy.start(2)
                    view.settings.append(Setting(legacy.group(1), legacy.group(2), value_start, value_start + len(legacy.group(2)), gate, "env"))
            continue
        if kind == "RUN":
            body = raw.lstrip()[3:]
            if body.lstrip().startswith("["):
                continue  # exec form: no shell
            offset = start + len(raw) - len(raw.lstrip()) + 3
            while True:
                flag = re.match(r"\s*--[a-z-]+=\S+", text[offset:end])
                if not flag:
                    break
                offset += flag.end()
            spans = []
            for number in range(first, last + 1):
                line_start = starts[number]
                line_text = source.lines[number]
                if number > first and line_text.lstrip().startswith("#"):
                    continue  # Docker drops comment lines inside a continued instruction
                spans.append((max(line_start, offset), line_start + len(line_text)))
            if "<<" in item["value"]:
                # The shell reads the heredoc as its input: only the command line is shell.
                spans = spans[:1]
                for body_first, body_last in item.get("heredoc", []):
                    if "bash" in item["value"] or "sh" in item["value"].split("<<")[0] or item["value"].strip().startswith("<<"):
                        spans.extend((starts[n], starts[n] + len(source.lines[n])) for n in range(body_first, body_last + 1))
            shell_code(view, blank_outside(text, spans), gate, source.path)
