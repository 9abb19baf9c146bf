"""`rocmlint server`, driven as an editor drives it: the real server in a subprocess, spoken to
over stdio with Content-Length framed JSON-RPC by the small client below, which also answers
the requests the server sends (watching files, applying an edit) as an editor would."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import lsp_messages
from rocmlint.server.checking import DocumentChecker, forget_what_was_read_from_disk, watched_file_kind

TIMEOUT = 60.0


class Client:
    def __init__(self, cwd: Path, apply_edits: bool = True, arguments: tuple[str, ...] = ()):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rocmlint", "server", *arguments], cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.notifications: queue.Queue = queue.Queue()
        self.responses: dict[int, dict] = {}
        self.answered = threading.Condition()
        self.server_requests: list[dict] = []  # requests the server sent us, in order
        self.apply_edits = apply_edits
        self.next_id = 0
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _write(self, message: dict) -> None:
        body = json.dumps(message).encode("utf-8")
        with self.lock:
            self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.process.stdin.flush()

    def _read(self) -> None:
        for message in lsp_messages(self.process.stdout):
            if "method" in message and "id" in message:
                self.server_requests.append(message)
                result = {"applied": self.apply_edits} if message["method"] == "workspace/applyEdit" else None
                self._write({"jsonrpc": "2.0", "id": message["id"], "result": result})
            elif "method" in message:
                self.notifications.put(message)
            else:
                with self.answered:
                    self.responses[message["id"]] = message
                    self.answered.notify_all()

    def notify(self, method: str, params: dict) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: dict | None) -> object:
        self.next_id += 1
        number = self.next_id
        self._write({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
        with self.answered:
            assert self.answered.wait_for(lambda: number in self.responses, timeout=TIMEOUT), f"no answer to {method}"
            answer = self.responses.pop(number)
        assert "error" not in answer, answer
        return answer["result"]

    def diagnostics(self, uri: str, version: int | None = None) -> list[dict]:
        """The next diagnostics published for `uri` (for `version`, when given)."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            remaining = deadline - time.monotonic()
            assert remaining > 0, "no diagnostics for " + uri
            try:
                message = self.notifications.get(timeout=remaining)
            except queue.Empty:
                continue
            params = message.get("params", {})
            if message["method"] == "textDocument/publishDiagnostics" and params["uri"] == uri:
                if version is None or params.get("version") == version:
                    return params["diagnostics"]

    def no_diagnostics_within(self, uri: str, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                message = self.notifications.get(timeout=remaining)
            except queue.Empty:
                return True
            if message["method"] == "textDocument/publishDiagnostics" and message["params"]["uri"] == uri:
                return False
        return True

    def initialize(self, root: Path, options: dict | None = None, encodings: list[str] | None = None) -> dict:
        capabilities = {
            "workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}, "applyEdit": True},
            "textDocument": {"publishDiagnostics": {"codeDescriptionSupport": True, "versionSupport": True}},
        }
        if encodings:
            capabilities["general"] = {"positionEncodings": encodings}
        result = self.request(
            "initialize",
            {"processId": None, "rootUri": root.as_uri(), "capabilities": capabilities, "initializationOptions": options or {},
             "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}]},
        )
        self.notify("initialized", {})
        return result

    def open(self, path: Path, language: str, text: str | None = None) -> str:
        uri = path.as_uri()
        text = path.read_text(encoding="utf-8") if text is None else text
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}})
        return uri

    def change(self, uri: str, version: int, text: str) -> None:
        self.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]})

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            assert self.process.wait(timeout=20) == 0
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def client_for():
    started: list[Client] = []

    def start(root: Path, **kwargs) -> Client:
        client = Client(root, **kwargs)
        started.append(client)
        return client

    yield start
    for client in started:
        if client.process.poll() is None:
            client.process.kill()
            client.process.wait()


def codes(diagnostics: list[dict]) -> list[str]:
    return [d.get("code") for d in diagnostics]


def apply(text: str, edits: list[dict]) -> str:
    """Apply LSP text edits (UTF-16 positions) to `text`, as an editor does."""
    lines = text.split("\n")

    def offset(position: dict) -> int:
        line = lines[position["line"]]
        units = line.encode("utf-16-le")[: position["character"] * 2].decode("utf-16-le")
        return sum(len(before) + 1 for before in lines[: position["line"]]) + len(units)

    spans = sorted(((offset(e["range"]["start"]), offset(e["range"]["end"]), e["newText"]) for e in edits), reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


PYTHON = 'import torch\n\nlabel = "𝔘𝔫𝔦"; model = torch.compile(model, mode="reduce-overhead")\n'


def test_python_diagnostics_quick_fixes_noqa_hover_and_the_apply_fixes_command(tmp_path):
    document = tmp_path / "train.py"
    document.write_text(PYTHON, encoding="utf-8")
    client = Client(tmp_path)
    try:
        result = client.initialize(tmp_path)
        capabilities = result["capabilities"]
        assert capabilities.get("positionEncoding", "utf-16") == "utf-16"
        assert "rocmlint.applyFixes" in capabilities["executeCommandProvider"]["commands"]
        assert capabilities["hoverProvider"] and capabilities["codeActionProvider"]
        uri = client.open(document, "python")
        diagnostics = client.diagnostics(uri, 1)
        assert codes(diagnostics) == ["ROCM002"]
        found = diagnostics[0]
        # The call comes after three mathematical letters, each two UTF-16 code units (outside
        # the BMP): code-point column 23, UTF-16 column 26; it ends at the end of the line.
        line = PYTHON.split("\n")[2]
        start = line.index("torch.compile")
        assert start == 23
        assert found["range"]["start"] == {"line": 2, "character": start + 3}
        assert found["range"]["end"] == {"line": 2, "character": len(line) + 3}
        assert found["severity"] in (1, 2, 3) and found["source"] == "rocmlint"
        assert found["codeDescription"]["href"].endswith("checks/ROCM002-compile-reduce-overhead.yaml")
        assert "reduce-overhead" in found["message"]

        actions = client.request(
            "textDocument/codeAction",
            {"textDocument": {"uri": uri}, "range": found["range"], "context": {"diagnostics": [found]}},
        )
        by_kind = {}
        for action in actions:
            by_kind.setdefault(action["kind"], []).append(action)
        fix = next(a for a in by_kind["quickfix"] if a.get("isPreferred"))
        fixed = apply(PYTHON, fix["edit"]["changes"][uri])
        assert 'mode=("default" if torch.version.hip else "reduce-overhead")' in fixed
        assert fixed.split("\n")[2].startswith('label = "𝔘𝔫𝔦"; model = torch.compile(model, mode=(')
        noqa = next(a for a in by_kind["quickfix"] if "noqa" in a["title"])
        assert apply(PYTHON, noqa["edit"]["changes"][uri]).split("\n")[2].endswith("  # noqa: ROCM002")
        assert [a["title"] for a in by_kind["source.fixAll.rocmlint"]] == ["rocmlint: apply 1 automatic fix"]

        # Hover on the finding: the check, the message and the fix-it snippet; elsewhere nothing.
        hover = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 2, "character": start + 5}})
        assert "ROCM002" in hover["contents"]["value"] and "```python" in hover["contents"]["value"]
        assert hover["range"] == found["range"]
        nothing = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 2}})
        assert nothing is None

        # The command sends the fixes as a workspace/applyEdit request, which this client applies.
        answer = client.request("workspace/executeCommand", {"command": "rocmlint.applyFixes", "arguments": [uri]})
        assert answer == {"fixes": 1, "applied": True}
        sent = [r for r in client.server_requests if r["method"] == "workspace/applyEdit"]
        assert len(sent) == 1
        fixed_by_command = apply(PYTHON, sent[0]["params"]["edit"]["changes"][uri])
        assert fixed_by_command == fixed

        # The editor applies it: the next change is checked and the finding is gone.
        client.change(uri, 2, fixed_by_command)
        assert client.diagnostics(uri, 2) == []
        client.change(uri, 3, PYTHON.replace("model = torch", "import pynvml\nmodel = torch"))
        assert sorted(codes(client.diagnostics(uri, 3))) == ["ROCM001", "ROCM002"]
        # On save too (the text is the one last changed: its kept result is published again).
        client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        assert sorted(codes(client.diagnostics(uri, 3))) == ["ROCM001", "ROCM002"]
        client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        assert client.diagnostics(uri) == []
    finally:
        client.close()


CUDA = """__global__ void reduce(float* out, float v) {
  // 𝛴 over the warp
  v += __shfl_xor_sync(0xffffffff, v, 16);
  out[threadIdx.x] = v;
}
"""


def test_cuda_diagnostics_unsafe_fixes_only_when_configured(tmp_path):
    document = tmp_path / "reduce.cu"
    document.write_text(CUDA, encoding="utf-8")
    mask = {"line": 2, "character": CUDA.split("\n")[2].index("0xffffffff")}
    for unsafe in (False, True):
        client = Client(tmp_path)
        try:
            client.initialize(tmp_path, {"rocmlint": {"unsafeFixes": unsafe}})
            uri = client.open(document, "cuda-cpp")
            diagnostics = client.diagnostics(uri, 1)
            assert "ROCM003" in codes(diagnostics)
            found = next(d for d in diagnostics if d["code"] == "ROCM003")
            assert found["range"]["start"]["line"] == 2
            actions = client.request(
                "textDocument/codeAction",
                {"textDocument": {"uri": uri}, "range": {"start": mask, "end": mask}, "context": {"diagnostics": [], "only": ["quickfix"]}},
            )
            rewrites = [a for a in actions if "ROCM003" in a["title"] and "noqa" not in a["title"]]
            noqa = [a for a in actions if a["title"] == "Add noqa: ROCM003 on this line"]
            assert len(noqa) == 1
            assert apply(CUDA, noqa[0]["edit"]["changes"][uri]).split("\n")[2].endswith("  // noqa: ROCM003")
            assert all(a["kind"] == "quickfix" for a in actions)
            if not unsafe:
                assert rewrites == []
            else:
                assert len(rewrites) == 1 and not rewrites[0].get("isPreferred")
                assert "0xffffffffffffffffull" in apply(CUDA, rewrites[0]["edit"]["changes"][uri])
        finally:
            client.close()


def test_build_and_requirements_files_are_checked(tmp_path):
    (tmp_path / "requirements.txt").write_text("numpy\ntorch==2.4.0\n", encoding="utf-8")
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.24)\nproject(k LANGUAGES CXX CUDA)\nset(CMAKE_CUDA_ARCHITECTURES 90)\n"
        "add_library(k SHARED k.cu)\n",
        encoding="utf-8",
    )
    client = Client(tmp_path)
    try:
        client.initialize(tmp_path)
        requirements = client.open(tmp_path / "requirements.txt", "pip-requirements")
        pins = client.diagnostics(requirements, 1)
        assert codes(pins) == ["ROCM307"] and pins[0]["range"]["start"]["line"] == 1
        cmake = client.open(tmp_path / "CMakeLists.txt", "cmake")
        cmake_codes = codes(client.diagnostics(cmake, 1))
        assert "ROCM301" in cmake_codes
        client.change(requirements, 2, "numpy\ntorch>=2.4\n")
        assert client.diagnostics(requirements, 2) == []
    finally:
        client.close()


def test_configuration_is_read_again_when_it_changes(tmp_path):
    document = tmp_path / "train.py"
    document.write_text(PYTHON, encoding="utf-8")
    config = tmp_path / "rocmlint.toml"
    client = Client(tmp_path)
    try:
        client.initialize(tmp_path)
        uri = client.open(document, "python")
        assert codes(client.diagnostics(uri, 1)) == ["ROCM002"]
        # The server asked the client to watch configuration and build files.
        registered = [r for r in client.server_requests if r["method"] == "client/registerCapability"]
        watchers = registered[0]["params"]["registrations"][0]["registerOptions"]["watchers"]
        assert "rocmlint.toml" in watchers[0]["globPattern"] and "CMakeLists.txt" in watchers[0]["globPattern"]

        config.write_text('ignore = ["ROCM002"]\n', encoding="utf-8")
        client.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": config.as_uri(), "type": 1}]})
        assert client.diagnostics(uri, 1) == []
        # A broken configuration is said in the editor, not taken for a clean file.
        config.write_text("ignore = [\n", encoding="utf-8")
        client.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": config.as_uri(), "type": 2}]})
        broken = client.diagnostics(uri, 1)
        assert len(broken) == 1 and "configuration error" in broken[0]["message"] and "rocmlint.toml" in broken[0]["message"]
        config.unlink()
        client.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": config.as_uri(), "type": 3}]})
        assert codes(client.diagnostics(uri, 1)) == ["ROCM002"]
    finally:
        client.close()


CMAKE_CUDA_ONLY = """cmake_minimum_required(VERSION 3.24)
option(USE_ROCM "Build for AMD GPUs" OFF)
if(USE_ROCM)
  project(k LANGUAGES CXX HIP)
  add_library(k SHARED csrc/common.cu)
else()
  project(k LANGUAGES CXX CUDA)
  add_library(k SHARED csrc/common.cu csrc/hopper.cu)
endif()
"""
HOPPER = """__global__ void fence(float* x) {
  asm volatile("membar.gl;");
  x[0] = 1.0f;
}
"""


def test_the_project_model_hides_cuda_only_files_and_is_refreshed_when_the_build_changes(tmp_path):
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "common.cu").write_text("__global__ void k(float* x) { x[0] = 0.0f; }\n", encoding="utf-8")
    hopper = tmp_path / "csrc" / "hopper.cu"
    hopper.write_text(HOPPER, encoding="utf-8")
    cmake = tmp_path / "CMakeLists.txt"
    cmake.write_text(CMAKE_CUDA_ONLY, encoding="utf-8")
    client = Client(tmp_path)
    try:
        # ROCM004 is in preview on projects that build for AMD: preview on, as `scan --preview`.
        client.initialize(tmp_path, {"preview": True})
        uri = client.open(hopper, "cuda-cpp")
        # Only the CUDA build compiles hopper.cu: its inline PTX is not reported, as in scan.
        assert client.diagnostics(uri, 1) == []
        # The ROCm build now compiles it too: once the build file is saved, the finding shows.
        cmake_uri = client.open(cmake, "cmake")
        client.diagnostics(cmake_uri, 1)
        both = CMAKE_CUDA_ONLY.replace("add_library(k SHARED csrc/common.cu)\n", "add_library(k SHARED csrc/common.cu csrc/hopper.cu)\n")
        cmake.write_text(both, encoding="utf-8")
        client.change(cmake_uri, 2, both)
        client.notify("textDocument/didSave", {"textDocument": {"uri": cmake_uri}})
        diagnostics = client.diagnostics(uri, 1)
        assert codes(diagnostics) == ["ROCM004"] and diagnostics[0]["range"]["start"]["line"] == 1
        # And back, through the client's file watcher this time.
        cmake.write_text(CMAKE_CUDA_ONLY, encoding="utf-8")
        client.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": cmake.as_uri(), "type": 2}]})
        assert client.diagnostics(uri, 1) == []
    finally:
        client.close()


def test_positions_in_utf8_when_the_client_asks_for_them(tmp_path):
    document = tmp_path / "train.py"
    document.write_text(PYTHON, encoding="utf-8")
    client = Client(tmp_path, arguments=("--no-cache",))
    try:
        assert client.initialize(tmp_path, encodings=["utf-8", "utf-16"])["capabilities"]["positionEncoding"] == "utf-8"
        uri = client.open(document, "python")
        found = client.diagnostics(uri, 1)[0]
        line = PYTHON.split("\n")[2]
        assert found["range"]["start"]["character"] == len(line[: line.index("torch.compile")].encode("utf-8")) == 32
    finally:
        client.close()


def test_unreadable_text_is_said_and_the_server_keeps_serving(tmp_path):
    client = Client(tmp_path)
    try:
        client.initialize(tmp_path)
        broken = client.open(tmp_path / "broken.py", "python", "def f(:\n    import pynvml\n")
        said = client.diagnostics(broken, 1)
        assert len(said) == 1 and "syntax error" in said[0]["message"].lower() and said[0]["range"]["start"]["line"] == 0
        other = client.open(tmp_path / "notes.txt", "plaintext", "import pynvml\n")
        assert client.diagnostics(other, 1) == []  # a file rocmlint does not read: nothing to say
        fine = client.open(tmp_path / "ok.py", "python", "import pynvml\n")
        assert codes(client.diagnostics(fine, 1)) == ["ROCM001"]
    finally:
        client.close()


def test_a_change_cancels_the_check_still_waiting_for_the_document(tmp_path):
    """Many changes in a row: the editor ends with the diagnostics of the last text, and the
    server does not publish one result per change."""
    document = tmp_path / "reduce.cu"
    client = Client(tmp_path)
    try:
        client.initialize(tmp_path)
        # A file that takes a while to check: 300 kernels, each with a finding.
        body = "".join(CUDA.replace("reduce(", f"reduce{i}(") for i in range(300))
        uri = client.open(document, "cuda-cpp", body)
        assert codes(client.diagnostics(uri, 1)).count("ROCM003") == 300
        for version in range(2, 22):
            # Each text differs from the last, so that none is answered from the kept result.
            client.change(uri, version, body + f"// edit {version}\n" + CUDA.replace("reduce(", "extra(") * (version == 21))
        published = []
        while True:
            diagnostics = client.diagnostics(uri)
            published.append(diagnostics)
            if codes(diagnostics).count("ROCM003") == 301:
                break
        # Twenty changes published one by one would be twenty results; how many fewer depends
        # on how the machine shares its cores between the client and the server.
        assert len(published) < 20, len(published)
    finally:
        client.close()


def test_unchanged_text_is_answered_from_the_kept_result_until_a_build_or_config_file_changes(tmp_path):
    path = str(tmp_path / "train.py")
    checker = DocumentChecker()
    first = checker.check(path, PYTHON)
    assert [f.check_id for f in first.result.findings] == ["ROCM002"]
    assert checker.check(path, PYTHON) is first and checker.checks_run == 1
    assert not checker.files_changed([str(tmp_path / "kernel.cu")])  # not a file that changes results
    assert checker.check(path, PYTHON) is first
    assert checker.files_changed([str(tmp_path / "CMakeLists.txt")])
    again = checker.check(path, PYTHON)
    assert again is not first and checker.checks_run == 2
    assert [f.check_id for f in again.result.findings] == ["ROCM002"]
    edited = checker.check(path, PYTHON.replace('"reduce-overhead"', '"default"'))
    assert edited.result.findings == [] and checker.checks_run == 3


def test_which_files_make_results_stale():
    assert watched_file_kind("/p/pyproject.toml") == watched_file_kind("/p/sub/rocmlint.toml") == "config"
    for name in ("CMakeLists.txt", "cuda.cmake", "setup.py", "Makefile", "GNUmakefile", ".gitmodules"):
        assert watched_file_kind(f"/p/{name}") == "project", name
    assert watched_file_kind("/p/model.py") == "python"
    assert watched_file_kind("/p/kernel.cu") is watched_file_kind("/p/README.md") is None


def test_forgetting_what_was_read_from_disk_reads_the_configuration_again(tmp_path):
    from rocmlint.config import config_for_file

    source = tmp_path / "train.py"
    assert config_for_file(source).ignore == ()
    (tmp_path / "rocmlint.toml").write_text('ignore = ["ROCM002"]\n', encoding="utf-8")
    assert config_for_file(source).ignore == ()  # kept from the first look
    forget_what_was_read_from_disk()
    assert config_for_file(source).ignore == ("ROCM002",)


def test_a_changed_module_a_platform_test_is_imported_from_is_read_again(tmp_path):
    """train.py is gated by fast_path, a platform test in utils.py; once utils.py no longer
    tests the GPU stack and the server is told so, the hit is reported (the answer about
    utils.py was kept in memory, and never forgotten)."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    utils = package / "utils.py"
    utils.write_text("import torch\n\ndef fast_path():\n    return torch.version.cuda is not None\n")
    train = package / "train.py"
    text = "import torch\nfrom .utils import fast_path\n\nif fast_path():\n    torch.backends.cudnn.benchmark = True\n"
    train.write_text(text)
    checker = DocumentChecker(use_cache=False)
    first = checker.check(str(train), text)
    assert first.result.findings == [] and [f.check_id for f in first.result.gated] == ["ROCM008"]
    utils.write_text("import torch\n\ndef fast_path():\n    return True\n")
    assert checker.files_changed([str(utils)])
    assert [f.check_id for f in checker.check(str(train), text).result.findings] == ["ROCM008"]


def test_walks_of_cmake_builds_kept_in_memory_are_forgotten_with_the_rest(tmp_path):
    from rocmlint.build import files

    (tmp_path / "CMakeLists.txt").write_text("project(k LANGUAGES CXX CUDA)\ninclude(more.cmake)\n", encoding="utf-8")
    (tmp_path / "more.cmake").write_text("set(X 1)\n", encoding="utf-8")
    entry = str(tmp_path / "CMakeLists.txt")
    files._cmake_walk(entry, entry, (tmp_path / "CMakeLists.txt").read_text())
    assert any(key[0] == entry for key in files._CMAKE_WALKS)
    forget_what_was_read_from_disk()
    assert not files._CMAKE_WALKS


def test_a_build_file_change_cancels_what_is_left_of_the_round_of_the_one_before(tmp_path):
    """Each configuration or build file change checks every open document again; the next
    such change cancels the checks of the last round that have not started yet."""
    (tmp_path / "CMakeLists.txt").write_text("project(k LANGUAGES CXX CUDA)\n", encoding="utf-8")
    body = "".join(CUDA.replace("reduce(", f"reduce{i}(") for i in range(200))
    client = Client(tmp_path)
    try:
        client.initialize(tmp_path)
        uris = []
        for n in range(3):
            uri = client.open(tmp_path / f"k{n}.cu", "cuda-cpp", body + f"// file {n}\n")
            assert codes(client.diagnostics(uri, 1)).count("ROCM003") == 200
            uris.append(uri)
        change = {"changes": [{"uri": (tmp_path / "CMakeLists.txt").as_uri(), "type": 2}]}
        client.notify("workspace/didChangeWatchedFiles", change)
        client.notify("workspace/didChangeWatchedFiles", change)
        published = {uri: 0 for uri in uris}
        for uri in uris:
            client.diagnostics(uri, 1)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                message = client.notifications.get(timeout=0.2)
            except queue.Empty:
                continue
            if message["method"] == "textDocument/publishDiagnostics":
                published[message["params"]["uri"]] += 1
        # Two whole rounds would publish twice for each document: once more after the waits above.
        assert published == {uri: 0 for uri in uris}
    finally:
        client.close()


def test_saved_text_is_answered_from_the_result_cache_after_a_restart(tmp_path, monkeypatch):
    import rocmlint.engine

    calls = []
    real_check_source = rocmlint.engine.check_source

    def counting(*args, **kwargs):
        calls.append(args[0].path)
        return real_check_source(*args, **kwargs)

    monkeypatch.setattr(rocmlint.engine, "check_source", counting)
    cache = tmp_path / "cache"
    path = tmp_path / "reduce.cu"
    path.write_text(CUDA, encoding="utf-8")
    first = DocumentChecker(cache_dir=str(cache)).check(str(path), CUDA)
    assert "ROCM003" in [f.check_id for f in first.result.findings] and len(calls) == 1
    entries = (cache / "results.pack").read_bytes()
    assert entries.count(b"\nF\t") == 1
    # A new server (an editor started again) opens the unchanged file: the kept result, unchecked.
    again = DocumentChecker(cache_dir=str(cache)).check(str(path), CUDA)
    assert again.result.findings == first.result.findings and len(calls) == 1
    # Text being typed (not the file's) is checked and never kept.
    typed = DocumentChecker(cache_dir=str(cache)).check(str(path), CUDA + "// typing\n")
    assert len(calls) == 2 and [f.check_id for f in typed.result.findings] == [f.check_id for f in first.result.findings]
    assert (cache / "results.pack").read_bytes() == entries
    # Without the cache every new server checks again.
    DocumentChecker(use_cache=False).check(str(path), CUDA)
    assert len(calls) == 3


def test_text_that_is_not_utf8_is_said_and_not_an_error(tmp_path):
    # JSON can carry a lone surrogate; no file can hold it as UTF-8.
    checked = DocumentChecker(use_cache=False).check(str(tmp_path / "m.py"), 'import pynvml\nx = "\ud800"\n')
    assert checked.result.findings == []
    assert [(p.line, p.reason.split(" (")[0]) for p in checked.result.problems] == [(2, "not valid UTF-8")]


def test_a_saved_python_module_rebuilds_the_import_graphs_but_not_the_project_models(tmp_path):
    checker = DocumentChecker(use_cache=False)
    checker.models["/somewhere"] = object()
    checker.import_graphs["/somewhere"] = object()
    assert checker.files_changed([str(tmp_path / "pkg" / "dispatch.py")])
    assert checker.import_graphs == {} and list(checker.models) == ["/somewhere"]
    assert checker.files_changed([str(tmp_path / "setup.py")])
    assert checker.models == {}
