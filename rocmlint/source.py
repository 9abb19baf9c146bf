"""One file being scanned: its text, read once, and its parse trees, built lazily and shared.

Every check for a file sees the same SourceFile, so a file is parsed at most once per parser.
The flake8 face hands in flake8's own `ast` tree so that it is never parsed twice.
"""

from __future__ import annotations

import ast
import bisect
from functools import cached_property


class SourceFile:
    def __init__(self, path: str, text: str, language: str, python_tree: ast.AST | None = None, macros=None, target=None):
        from rocmlint.config import GpuTarget

        self.path = path
        self.text = text
        self.language = language
        self._python_tree = python_tree
        self.macros = macros  # a project's rocmlint.cpp.preprocessor.MacroTable, when known
        # The ROCm release and GPUs the port targets ([tool.rocmlint] rocm-version, arch).
        self.target = target if target is not None else GpuTarget()

    # --- positions ------------------------------------------------------------------------
    @cached_property
    def line_starts(self) -> list[int]:
        """Code-point offset of the start of each line (index 0 is line 1)."""
        starts = [0]
        offset = 0
        for line in self.lines[:-1]:
            offset += len(line) + 1
            starts.append(offset)
        return starts

    @cached_property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    def offset(self, line: int, col: int) -> int:
        """Code-point offset of (1-based line, 0-based code-point column)."""
        return self.line_starts[line - 1] + col

    def position(self, offset: int) -> tuple[int, int]:
        """(1-based line, 0-based code-point column) of a code-point offset."""
        index = bisect.bisect_right(self.line_starts, offset) - 1
        return index + 1, offset - self.line_starts[index]

    def line_text(self, line: int) -> str:
        return self.lines[line - 1] if 0 < line <= len(self.lines) else ""

    def byte_col_to_char(self, line: int, byte_col: int) -> int:
        """`ast` columns are UTF-8 byte offsets; convert one to code points."""
        text = self.line_text(line)
        if text.isascii():
            return byte_col
        from rocmlint.findings import line_columns

        return line_columns(text).to_chars(byte_col)

    # --- parse trees ----------------------------------------------------------------------
    @property
    def python_tree(self) -> ast.AST:
        """The module's `ast` tree. Raises SyntaxError (or ValueError for NUL bytes)."""
        if self._python_tree is None:
            self._python_tree = ast.parse(self.text, filename=self.path)
        return self._python_tree

    @cached_property
    def python_index(self):
        from rocmlint.python.index import PythonIndex

        return PythonIndex(self.python_tree, self.path, self.lines)

    @cached_property
    def cpp_root(self):
        """ast-grep root of the file as C++, after CUDA-only syntax is blanked."""
        from ast_grep_py import SgRoot

        from rocmlint.cpp.cuda_syntax import blank_cuda_syntax, short_lines_for_parser

        # Offsets in the parsed text are offsets in the file; its lines may not be (long lines
        # are broken for speed): take lines from offsets (`position`).
        return SgRoot(short_lines_for_parser(blank_cuda_syntax(self.text)), "cpp").root()

    def blanked_lines(self, strings: bool = True) -> list[str]:
        """The lines of a C/C++ file with its comments blanked, and its string literals too
        when `strings` (rocmlint.cpp.cuda_syntax): only code, at the same positions."""
        from rocmlint.cpp.cuda_syntax import blank_comments_and_literals

        return blank_comments_and_literals(self.text, strings=strings).split("\n")

    @cached_property
    def directives(self):
        """The C/C++ file's preprocessor directives (rocmlint.cpp.preprocessor.scan_directives)."""
        from rocmlint.cpp.preprocessor import scan_directives

        return scan_directives(self.text) if "#" in self.text else []

    @cached_property
    def literal_spans(self) -> list[tuple[int, int, bool]]:
        """(start, end, is_comment) of every comment and string literal of a C/C++ file."""
        from rocmlint.cpp.cuda_syntax import _scan_literals

        return _scan_literals(self.text)

    @cached_property
    def code_only(self) -> str:
        """The C/C++ text with comments and string literals blanked, at the same offsets."""
        from rocmlint.cpp.cuda_syntax import _blanked

        return _blanked(self.text, [(start, end) for start, end, _ in self.literal_spans])

    @cached_property
    def amd_native(self) -> str | None:
        """Why this C/C++ file is written for AMD GPUs (it uses AMD-only builtins or Composable
        Kernel outside any GPU stack test), or None."""
        import re

        from rocmlint.cpp.cuda_syntax import blank_comments_and_literals

        code = blank_comments_and_literals(self.text)
        gates = None
        for hit in re.finditer(r"\b(__builtin_amdgcn_\w+|ck_tile::|ck::|__AMDGCN_WAVEFRONT_SIZE\w*)", code):
            gates = gates or self.preprocessor_gates
            line = self.position(hit.start())[0]
            if gates.reason(line) is None:
                return f"the file is written for AMD GPUs: it uses `{hit.group(1)}` (line {line}) outside any GPU stack test"
        return None

    @cached_property
    def wave_context(self):
        """Per function, where the code also works with the whole hardware wavefront
        (rocmlint.cpp.wave): what makes a 32-lane assumption wrong on AMD."""
        from rocmlint.cpp.wave import wave_context

        return wave_context(self)

    @cached_property
    def preprocessor_gates(self):
        from rocmlint.cpp.gates import PreprocessorGates

        return PreprocessorGates(self.text, self.macros) if self.macros is not None else PreprocessorGates(self.text)

    @cached_property
    def build_view(self):
        """What a build, packaging or container file says (rocmlint.build.view)."""
        from rocmlint.build.view import build_view

        return build_view(self)

    @cached_property
    def suppressions(self):
        from rocmlint.noqa.comments import Suppressions

        return Suppressions(self.text, self.language)
