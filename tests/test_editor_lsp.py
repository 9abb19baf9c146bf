"""Editors: a real python-lsp-server, spoken to over stdio as an editor does, runs flake8 with
the rocmlint plugin and publishes the findings. The diagnostic must start where the flagged
code starts, on an ASCII line and on a line with non-ASCII text before the finding (LSP counts
characters; flake8's `ast` columns would count UTF-8 bytes, 3 too many after "äöü")."""

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path

from conftest import lsp_messages

SOURCE = 'import pynvml\nlabel = "äöü"; import pynvml as nvml\n'


class LanguageServer:
    """A minimal LSP client: Content-Length framed JSON-RPC over the server's stdin/stdout."""

    def __init__(self, cwd: Path):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pylsp"], cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.messages: queue.Queue = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for message in lsp_messages(self.process.stdout):
            self.messages.put(message)

    def send(self, method: str, params: dict, request: bool = False) -> int | None:
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        if request:
            self.next_id += 1
            message["id"] = self.next_id
        body = json.dumps(message).encode("utf-8")
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()
        return message.get("id")

    def wait_for(self, predicate, timeout: float = 60.0) -> dict:
        import time

        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            assert remaining > 0, "no such message from the language server: " + self.process.stderr.read1().decode()
            try:
                message = self.messages.get(timeout=remaining)
            except queue.Empty:
                continue
            if predicate(message):
                return message

    def close(self) -> None:
        try:
            shutdown = self.send("shutdown", {}, request=True)
            self.wait_for(lambda m: m.get("id") == shutdown, timeout=20)
            self.send("exit", {})
            self.process.wait(timeout=20)
        finally:
            if self.process.poll() is None:
                self.process.kill()


def test_python_lsp_server_shows_rocmlint_findings_at_the_right_characters(tmp_path):
    document = tmp_path / "monitor.py"
    document.write_text(SOURCE, encoding="utf-8")
    flake8 = Path(sys.executable).parent / "flake8"
    server = LanguageServer(tmp_path)
    try:
        init = server.send(
            "initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}, request=True
        )
        reply = server.wait_for(lambda m: m.get("id") == init)
        assert "capabilities" in reply["result"]
        server.send("initialized", {})
        plugins = {name: {"enabled": False} for name in ("pycodestyle", "pyflakes", "mccabe", "pydocstyle", "pylint", "autopep8", "yapf")}
        plugins["flake8"] = {"enabled": True, "executable": str(flake8), "select": ["ROCM"]}
        server.send("workspace/didChangeConfiguration", {"settings": {"pylsp": {"plugins": plugins}}})
        server.send(
            "textDocument/didOpen",
            {"textDocument": {"uri": document.as_uri(), "languageId": "python", "version": 1, "text": SOURCE}},
        )
        published = server.wait_for(
            lambda m: m.get("method") == "textDocument/publishDiagnostics"
            and m["params"]["uri"] == document.as_uri()
            and any(d.get("code", "").startswith("ROCM") for d in m["params"]["diagnostics"])
        )
    finally:
        server.close()
    found = sorted(
        (d["range"]["start"]["line"], d["range"]["start"]["character"], d["code"], d["source"])
        for d in published["params"]["diagnostics"]
    )
    lines = SOURCE.splitlines()
    # The second import follows `label = "äöü"; `: 15 characters, 18 UTF-8 bytes.
    assert lines[1][15:].startswith("import pynvml as nvml")
    assert found == [(0, 0, "ROCM001", "flake8"), (1, 15, "ROCM001", "flake8")]
    messages = [d["message"] for d in published["params"]["diagnostics"]]
    assert all(m.startswith("ROCM001 `import pynvml") for m in messages)
