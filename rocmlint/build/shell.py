"""Shell commands, read with tree-sitter's bash grammar (through ast-grep, already a
dependency): the commands a script, a Dockerfile `RUN` or a CI `run:` step executes, their
words with exact positions, the variables they set, and the gates around them.

A command is gated when an `if`/`elif`/`else` arm, a `case` arm or an `a && b` list around it
asks which GPU stack is there: `if command -v nvidia-smi`, `elif [ -d /opt/rocm ]`,
`case "$GPU" in rocm)`, `[ "$USE_ROCM" = 1 ] && ...`. Both sides count, as in Python and C/C++:
code under such a test already knows which stack it runs on.

Text outside the shell code (the rest of a Dockerfile or YAML file) is blanked before parsing,
keeping its length, so that positions are offsets into the whole file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from rocmlint.platforms import names_cuda, names_rocm
from rocmlint.findings import excerpt

# Words that test for a GPU stack in a shell condition, besides names worlds.py knows.
_STACK_TOOL = re.compile(r"nvidia-smi|rocminfo|rocm-smi|amd-smi|/opt/rocm|/dev/kfd|hipconfig|nvcc", re.IGNORECASE)


@lru_cache(maxsize=4096)  # every command under an `if` asks again about the same conditions
def names_stack(text: str) -> bool:
    """Does a shell condition ask which GPU stack this is?"""
    return bool(_STACK_TOOL.search(text)) or names_rocm(text) or names_cuda(text)


@dataclass(frozen=True)
class Word:
    text: str
    start: int
    end: int


@dataclass
class ShellCommand:
    name: str  # the command name as written (`pip`, `python3`, `docker`)
    words: list[Word]  # the arguments after the name, quotes removed from the text
    start: int
    end: int
    line: int  # 1-based
    gate: str | None
    assignments: list[tuple[str, Word]] = field(default_factory=list)  # `VAR=value cmd`


@dataclass
class ShellAssignment:
    name: str
    value: Word
    start: int
    line: int
    gate: str | None
    exported: bool


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _word(node) -> Word:
    r = node.range()
    return Word(_unquote(node.text()), r.start.index, r.end.index)


def _gate(node, early_exits: dict) -> str | None:
    """Why a node only runs on one GPU stack, or None. `early_exits` keeps _after_early_exit's
    answers for the script's nodes (every command below one block asks about the same ones)."""
    early = _after_early_exit(node, early_exits)
    if early is not None:
        return early
    for ancestor in node.ancestors():
        kind = ancestor.kind()
        if kind == "if_statement":
            conditions = _if_conditions(ancestor)
            texts = [c.text() for c in conditions]
            for clause in ancestor.children():
                if clause.kind() == "elif_clause":
                    texts.extend(c.text() for c in _if_conditions(clause))
            in_condition = any(_contains(c, node) for c in conditions)
            if not in_condition and any(names_stack(t) for t in texts):
                return f"under `if {excerpt(texts[0])}` (line {ancestor.range().start.line + 1}), which asks for the GPU stack"
        elif kind == "case_statement":
            # Every arm of a `case` that has an arm for a GPU stack is that stack's or another's.
            patterns = [_case_pattern(item) for item in ancestor.children() if item.kind() == "case_item"]
            if any(names_stack(p) for p in patterns):
                stack = next(p for p in patterns if names_stack(p))
                return f"in a `case` with a `{stack})` arm (line {ancestor.range().start.line + 1}), which asks for the GPU stack"
        elif kind == "list":
            first = ancestor.child(0)
            if first is not None and not _contains(first, node) and names_stack(first.text()):
                return f"after `{excerpt(first.text())}` (line {ancestor.range().start.line + 1}), which asks for the GPU stack"
    return None


def _after_early_exit(node, answers: dict) -> str | None:
    """`if command -v rocminfo >/dev/null; then exit 0; fi` before a command, in the same
    script or block: what follows runs on the other GPU stack only. `answers` keeps what was
    found for each node on the way up (a loop, not recursion: scripts may nest deeply)."""
    climbed, answer, current = [], None, node
    while current is not None:
        if current in answers:
            answer = answers[current]
            break
        climbed.append(current)
        answer = _early_exit_before(current)
        if answer is not None:
            break
        current = current.parent()
    for below in climbed:
        answers[below] = answer
    return answer


def _early_exit_before(node) -> str | None:
    """The early exit on a stack test among the statements before `node` in its own block."""
    for earlier in node.prev_all():
        if earlier.kind() != "if_statement":
            continue
        conditions = _if_conditions(earlier)
        if not conditions or not any(names_stack(c.text()) for c in conditions):
            continue
        if any(clause.kind() in ("elif_clause", "else_clause") for clause in earlier.children()):
            continue
        body = [c for c in earlier.children() if c.is_named() and c not in conditions and c.kind() != "comment"]
        last = body[-1] if body else None
        name = last.field("name") if last is not None and last.kind() == "command" else None
        if name is not None and name.text() in ("exit", "return"):
            line = earlier.range().start.line + 1
            return f"after `if {excerpt(conditions[0].text())}` (line {line}) exits early, which asks for the GPU stack"
    return None


def _case_pattern(item) -> str:
    value = item.field("value")
    return (value.text() if value is not None else item.text().split(")", 1)[0]).strip()


def _if_conditions(node) -> list:
    """The condition nodes of an if/elif: the children between the keyword and `then`."""
    conditions = []
    started = False
    for child in node.children():
        kind = child.kind()
        if kind in ("if", "elif"):
            started = True
            continue
        if kind == "then":
            break
        if started and child.is_named():
            conditions.append(child)
    return conditions


def _contains(outer, inner) -> bool:
    a, b = outer.range(), inner.range()
    return a.start.index <= b.start.index and b.end.index <= a.end.index


class ShellScript:
    """The commands and assignments of shell code inside `text` (offsets are into `text`)."""

    def __init__(self, text: str):
        from ast_grep_py import SgRoot

        self.commands: list[ShellCommand] = []
        self.assignments: list[ShellAssignment] = []
        root = SgRoot(text, "bash").root()
        early_exits: dict = {}
        for node in root.find_all(kind="command"):
            name_node = node.field("name")
            if name_node is None:
                continue
            words, assignments = [], []
            for child in node.children():
                kind = child.kind()
                if child == name_node or kind in ("command_name",) or not child.is_named():
                    continue
                if kind == "variable_assignment":
                    variable, value = child.field("name"), child.field("value")
                    if variable is not None and value is not None:
                        assignments.append((variable.text(), _word(value)))
                    continue
                if kind in ("file_redirect", "heredoc_redirect", "herestring_redirect", "comment"):
                    continue
                words.append(_word(child))
            r = node.range()
            self.commands.append(
                ShellCommand(_unquote(name_node.text()), words, r.start.index, r.end.index, r.start.line + 1, _gate(node, early_exits), assignments)
            )
        for node in root.find_all(kind="variable_assignment"):
            parent = node.parent()
            if parent is not None and parent.kind() == "command":
                continue  # `VAR=value cmd`: belongs to that command
            variable, value = node.field("name"), node.field("value")
            if variable is None or value is None:
                continue
            exported = parent is not None and parent.kind() == "declaration_command" and parent.text().startswith("export")
            r = node.range()
            self.assignments.append(
                ShellAssignment(variable.text(), _word(value), r.start.index, r.start.line + 1, _gate(node, early_exits), exported)
            )
