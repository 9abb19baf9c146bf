"""What a build, packaging or container file says, in one shape (rocmlint.build.files): the
reader for each kind of file."""

from __future__ import annotations

import os

from rocmlint.build.files import (
    BuildView,
    cmake_view,
    dotenv_view,
    file_gate,
    makefile_view,
    pyproject_view,
    requirements_view,
    shell_view,
)


def _dockerfile(view: BuildView, source) -> None:
    from rocmlint.build.dockerfile import read_dockerfile

    read_dockerfile(view, source, file_gate(source.path))


def _uv_lock(view: BuildView, source) -> None:
    from rocmlint.build.lockfiles import uv_lock_view

    uv_lock_view(view, source)


def _yaml(view: BuildView, source) -> None:
    from rocmlint.build.yaml_files import read_yaml

    read_yaml(view, source, file_gate(source.path))


_READERS = {
    "requirements": requirements_view,
    "pyproject": pyproject_view,
    "cmake": cmake_view,
    "make": makefile_view,
    "shell": shell_view,
    "dotenv": dotenv_view,
    "dockerfile": _dockerfile,
    "yaml": _yaml,
    "uvlock": _uv_lock,
}


def build_view(source) -> BuildView:
    """The build view of a file (empty for a language with none, and for Python files that
    neither are setup.py nor build native code: rocmlint.build.python_build)."""
    view = BuildView()
    if source.language == "python":
        from rocmlint.build.python_build import build_helper_view, setup_py_view

        if os.path.basename(source.path) == "setup.py":
            setup_py_view(view, source)
        else:
            build_helper_view(view, source)
        return view
    reader = _READERS.get(source.language)
    if reader is not None:
        reader(view, source)
    return view
