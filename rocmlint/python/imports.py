"""What a Python module imports: its import statements, and the names they bind."""

from __future__ import annotations

import ast
from collections import deque


def dotted_name(node: ast.AST) -> str | None:
    """`torch.version.hip` for that chain of attributes on a name; None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def import_statements(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """The module's imports in the order `ast.walk` gives them. Imports are statements, so
    only statement bodies are entered (an `except` clause's and a `case`'s included): a
    fraction of the nodes a whole walk visits."""
    found: list[ast.Import | ast.ImportFrom] = []
    pending = deque([tree])
    while pending:
        node = pending.popleft()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                pending.extend(item for item in value if isinstance(item, _STATEMENT_HOLDERS))
    return found


_STATEMENT_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)


def alias_map(imports) -> dict[str, str]:
    """Local name -> qualified name that these import statements bind."""
    aliases: dict[str, str] = {}
    for node in imports:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    # `import torch.nn` binds `torch`
                    root = alias.name.split(".")[0]
                    aliases[root] = root
        elif node.module and node.level == 0:
            for alias in node.names:
                if alias.name != "*":
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def module_aliases(tree: ast.AST) -> dict[str, str]:
    """Local name -> qualified name for every import of a module."""
    return alias_map(import_statements(tree))
