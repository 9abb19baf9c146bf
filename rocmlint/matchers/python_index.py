"""Facts about one Python module that every Python check shares, computed once per file.

- parents: child -> parent links, for gate checks and scope questions;
- aliases: local name -> qualified name, from every import in the module, so that
  `import torch._inductor.config as ic` makes `ic.triton.cudagraphs` read as
  `torch._inductor.config.triton.cudagraphs`, and `from torch import compile as tc` makes
  `tc(...)` a call of `torch.compile`.
The scanner never imports or executes the code: everything here comes from the `ast` tree.
"""

from __future__ import annotations

import ast


def _alias_map(imports) -> dict[str, str]:
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
    return _alias_map(n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)))


class PythonIndex:
    def __init__(self, tree: ast.AST, path: str | None = None):
        self.tree = tree
        self.path = path
        self.parents: dict[int, ast.AST] = {}
        self.calls: list[ast.Call] = []
        self.imports: list[ast.Import | ast.ImportFrom] = []
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[id(child)] = parent
            if isinstance(parent, ast.Call):
                self.calls.append(parent)
            elif isinstance(parent, (ast.Import, ast.ImportFrom)):
                self.imports.append(parent)
        self.aliases = _alias_map(self.imports)
        self._predicates = None

    @property
    def predicates(self):
        """The module's platform predicates (rocmlint.gates.PlatformPredicates), found lazily:
        only a file with a hit to gate needs them."""
        if self._predicates is None:
            from rocmlint.gates import PlatformPredicates

            self._predicates = PlatformPredicates.of_module(self.tree, self.path, self.aliases)
        return self._predicates

    def gate(self, node: ast.AST, *, import_guard: bool = False) -> str | None:
        """Why a node is already gated for one GPU stack (rocmlint.gates.python_gate), or None."""
        from rocmlint.gates import python_gate

        return python_gate(node, self.parents, import_guard=import_guard, predicates=self.predicates)

    def qualified_name(self, node: ast.AST) -> str | None:
        """`ic.triton.cudagraphs` -> `torch._inductor.config.triton.cudagraphs`.

        A name that no import binds is taken as written (code snippets often skip imports).
        """
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        parts.append(self.aliases.get(node.id, node.id))
        return ".".join(reversed(parts))

    def local_name_of_module(self, module: str) -> str | None:
        """The local name that refers to `module` itself (`import torch as T` -> "T")."""
        for local, qualified in self.aliases.items():
            if qualified == module:
                return local
        return None

    def at_module_level(self, node: ast.AST) -> bool:
        """True unless the node is inside a function or lambda (class bodies run at import)."""
        parent = self.parents.get(id(node))
        while parent is not None:
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                return False
            parent = self.parents.get(id(parent))
        return True
