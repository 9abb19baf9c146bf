"""`rocmlint server`: a Language Server Protocol server over stdio for every file rocmlint
reads (Python, CUDA/HIP C++, build, packaging and container files).

It is a face of the one engine, as the scanner and the flake8 plugin are: each open document
is checked as `rocmlint scan - --stdin-filename PATH` checks it (rocmlint.server.checking),
and findings become diagnostics, code actions and hovers at the protocol's edge
(rocmlint.server.protocol). The protocol itself is spoken by pygls (rocmlint.server.language_server):
a maintained pure-Python implementation, typed by lsprotocol (the types generated from the
LSP specification), so rocmlint needs no other runtime and the server starts where rocmlint
is installed with the `server` extra.
"""

from __future__ import annotations


def main(use_cache: bool = True) -> int:
    try:
        from rocmlint.server.language_server import serve
    except ImportError as exc:
        import sys

        print(f"rocmlint: error: `rocmlint server` needs pygls and lsprotocol ({exc}): pip install 'rocmlint[server]'", file=sys.stderr)
        return 2
    return serve(use_cache)
