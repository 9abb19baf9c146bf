"""YAML build and container files: compose files, CI workflows, conda environment files.

Read with PyYAML's node tree (`yaml.compose_all`), which keeps where every scalar is written.
What they say that matters for a port:

- shell steps (`run:`, `script:`, `command:`/`commands:`...) are read as shell;
- `image:` and `container:` name base images;
- `env:` / `environment:` / `variables:` set environment variables;
- `runtime: nvidia`, `driver: nvidia`, `gpus: all`, `nvidia.com/gpu` ask for NVIDIA's
  container runtime or device plugin;
- a conda environment's `dependencies:` (conda specs and its `pip:` list).

Gates: the file's name, and a job, service or step whose key names a GPU stack
(`test-rocm:`, `services: {vllm-cuda: ...}`) or whose `if:` asks for one. In a project that
builds or runs for AMD, also a job or step that runs on NVIDIA GPUs only by the machine it asks
for (`runs-on: [self-hosted, h100]`, Buildkite's `device: h200`): it never runs on AMD.
"""

from __future__ import annotations

import re

from rocmlint.build.files import (
    BuildView, Channel, Dependency, Image, Setting, Token, blank_outside, join_gates, parse_conda_spec, parse_dependency,
    shell_code, stack_of_name,
)
from rocmlint.build.shell import names_stack

_SHELL_KEYS = {"run", "script", "before_script", "after_script", "commands", "command", "entrypoint", "steps_script"}
_ENV_KEYS = {"env", "environment", "variables"}
_FOR = {"rocm": "ROCm", "cuda": "CUDA", "other": "another platform (neither ROCm nor CUDA)"}
# Keys that name the machine a CI job or step runs on, and the NVIDIA GPUs (or vendor) such a
# name may give; a name that also says AMD (`mi300`, `gfx942`, `rocm`) is not NVIDIA-only.
_RUNNER_KEYS = {"runs-on", "device", "gpu", "queue", "runner"}
_NVIDIA_MACHINE = re.compile(
    r"(?i)(?<![a-z0-9])(nvidia|cuda|h100|h200|h20|gh200|a100|a10g?|a6000|l4|l40s?|b100|b200|gb200|b300|t4|v100|rtx\d*)(?![a-z0-9])"
)
_AMD_MACHINE = re.compile(r"(?i)amd|rocm|(?<![a-z])mi\d{3}|gfx\d")


def read_yaml(view: BuildView, source, file_gate: str | None) -> None:
    import yaml

    # PyYAML's C loader (libyaml) composes the same nodes at the same character offsets about
    # ten times faster than its pure-Python one, but does not count a leading byte-order mark.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    if source.text.startswith("\ufeff"):
        loader = yaml.SafeLoader
    try:
        documents = list(yaml.compose_all(source.text, Loader=loader))
    except yaml.YAMLError:
        return
    from rocmlint.build.project_root import project_kind

    reader = _Reader(view, source, runner_gates=project_kind(source.path) == "amd")
    for document in documents:
        if document is None:
            continue
        conda = _is_conda_environment(document)
        reader.walk(document, file_gate, depth=0, conda=conda)
    if reader.shell_spans:
        for gate, spans in reader.shell_spans.items():
            shell_code(view, blank_outside(source.text, spans), gate, source.path)


def _is_conda_environment(node) -> bool:
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return False
    keys = {k.value for k, _ in node.value if isinstance(k, yaml.ScalarNode)}
    return "dependencies" in keys and bool(keys & {"channels", "name", "prefix"})


class _Reader:
    def __init__(self, view: BuildView, source, runner_gates: bool = False):
        self.view = view
        self.source = source
        self.runner_gates = runner_gates
        self.shell_spans: dict[str | None, list[tuple[int, int]]] = {}

    def span(self, node) -> tuple[int, int]:
        start, end = node.start_mark.index, node.end_mark.index
        if node.style in ('"', "'"):
            return start + 1, max(start + 1, end - 1)
        if node.style in ("|", ">"):
            # A block scalar's text starts on the line after its indicator.
            newline = self.source.text.find("\n", start)
            return (newline + 1 if 0 <= newline < end else start), end
        return start, end

    def walk(self, node, gate: str | None, depth: int, conda: bool = False, key: str | None = None) -> None:
        import yaml

        if isinstance(node, yaml.MappingNode):
            gate = join_gates(gate, self._condition_gate(node))
            if self.runner_gates:
                gate = join_gates(gate, self._runner_gate(node))
            for key_node, value in node.value:
                name = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
                if not isinstance(name, str):
                    continue
                child_gate = gate
                stack = stack_of_name(name) if isinstance(value, yaml.MappingNode) else None
                if stack:
                    child_gate = join_gates(gate, f"in `{name}`, which is for {_FOR[stack]}")
                self.entry(name, key_node, value, child_gate, depth, conda)
        elif isinstance(node, yaml.SequenceNode):
            for item in node.value:
                self.walk(item, gate, depth + 1, conda, key)

    def _condition_gate(self, node) -> str | None:
        import yaml

        for key_node, value in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == "if" and isinstance(value, yaml.ScalarNode):
                if names_stack(str(value.value)):
                    return f"under `if: {value.value}` (line {value.start_mark.line + 1}), which asks for the GPU stack"
        return None

    def _runner_gate(self, node) -> str | None:
        """A job or step that asks for a machine with NVIDIA GPUs by name, and none with AMD."""
        import yaml

        for key_node, value in node.value:
            if not (isinstance(key_node, yaml.ScalarNode) and key_node.value in _RUNNER_KEYS):
                continue
            items = value.value if isinstance(value, yaml.SequenceNode) else [value]
            labels = [str(item.value) for item in items if isinstance(item, yaml.ScalarNode)]
            if any(_NVIDIA_MACHINE.search(label) for label in labels) and not any(_AMD_MACHINE.search(label) for label in labels):
                where = value.start_mark.line + 1
                return f"in a job on NVIDIA machines (`{key_node.value}: {', '.join(labels)}`, line {where}): it never runs on AMD"
        return None

    def entry(self, name: str, key_node, value, gate: str | None, depth: int, conda: bool) -> None:
        import yaml

        lower = name.lower()
        if isinstance(value, yaml.ScalarNode):
            text = str(value.value)
            start, end = self.span(value)
            if lower in _SHELL_KEYS:
                self.shell_spans.setdefault(gate, []).append((start, end))
            elif lower in ("image", "container"):
                self.view.images.append(Image(text, start, end, gate))
            elif lower == "options":
                unit = self.view.next_unit()
                for match in re.finditer(r"\S+", self.source.text[start:end]):
                    self.view.tokens.append(Token(match.group(0), start + match.start(), start + match.end(), gate, unit))
            elif lower in ("runtime", "driver", "gpus"):
                self.view.tokens.append(Token(f"{lower}: {text}", start, end, gate, self.view.next_unit()))
            if "nvidia.com/gpu" in lower:
                r = key_node.start_mark.index, key_node.end_mark.index
                self.view.tokens.append(Token(name, r[0], r[1], gate, self.view.next_unit()))
            return
        if isinstance(value, yaml.SequenceNode) and lower in _SHELL_KEYS:
            for item in value.value:
                if isinstance(item, yaml.ScalarNode):
                    self.shell_spans.setdefault(gate, []).append(self.span(item))
            return
        if lower in _ENV_KEYS:
            self.environment(value, gate)
            return
        if conda and depth == 0 and lower == "dependencies" and isinstance(value, yaml.SequenceNode):
            self.conda_dependencies(value, gate)
            return
        if conda and depth == 0 and lower == "channels" and isinstance(value, yaml.SequenceNode):
            for item in value.value:
                if isinstance(item, yaml.ScalarNode):
                    start, end = self.span(item)
                    self.view.channels.append(Channel(str(item.value).strip(), start, end, gate))
            return
        if isinstance(value, yaml.MappingNode) and "nvidia.com/gpu" in lower:
            r = key_node.start_mark.index, key_node.end_mark.index
            self.view.tokens.append(Token(name, r[0], r[1], gate, self.view.next_unit()))
        self.walk(value, gate, depth + 1, conda, name)

    def environment(self, node, gate: str | None) -> None:
        import yaml

        if isinstance(node, yaml.MappingNode):
            for key_node, value in node.value:
                if isinstance(key_node, yaml.ScalarNode) and isinstance(value, yaml.ScalarNode):
                    start, end = self.span(value)
                    self.view.settings.append(Setting(str(key_node.value), str(value.value), start, end, gate, "env"))
        elif isinstance(node, yaml.SequenceNode):
            for item in node.value:
                if isinstance(item, yaml.ScalarNode) and "=" in str(item.value):
                    name, _, text = str(item.value).partition("=")
                    start, end = self.span(item)
                    value_start = start + len(name) + 1
                    self.view.settings.append(Setting(name.strip(), text, value_start, end, gate, "env"))

    def conda_dependencies(self, node, gate: str | None) -> None:
        import yaml
        from packaging.utils import canonicalize_name

        for item in node.value:
            if isinstance(item, yaml.ScalarNode):
                spec = str(item.value).strip()
                parsed = parse_conda_spec(spec)
                if parsed is None:
                    continue
                channel, name, rest = parsed
                start, end = self.span(item)
                self.view.dependencies.append(
                    Dependency(spec, canonicalize_name(name), rest, frozenset(), channel, start, end, gate, conda=True)
                )
            elif isinstance(item, yaml.MappingNode):
                for key_node, value in item.value:
                    if getattr(key_node, "value", None) == "pip" and isinstance(value, yaml.SequenceNode):
                        for requirement in value.value:
                            if isinstance(requirement, yaml.ScalarNode):
                                start, end = self.span(requirement)
                                text = str(requirement.value)
                                if text.startswith("-"):
                                    unit = self.view.next_unit()
                                    for match in re.finditer(r"\S+", self.source.text[start:end]):
                                        self.view.tokens.append(Token(match.group(0), start + match.start(), start + match.end(), gate, unit))
                                    continue
                                dependency = parse_dependency(text, start, end, gate)
                                if dependency:
                                    self.view.dependencies.append(dependency)
