"""Time `rocmlint server` from a change to its diagnostics, as an editor sees it.

    python benchmarks/bench_server.py                  # a 2,000-line .cu file, 30 changes
    python benchmarks/bench_server.py --lines 5000 --changes 50

A benchmark, not a test: it asserts nothing about speed. The server runs in a subprocess and
is spoken to over stdio, as an editor speaks to it. The file is made of CUDA kernels of the
kinds rocmlint reads: ordinary element-wise kernels and launches, and warp-level kernels
(shuffles with 32-bit masks, ballots, 32-lane numbering) with several findings each, one in
ten by default and then all of them (the worst case); it sits in a project being ported
(a CMakeLists.txt that builds it for CUDA), so that the project pass runs too. Each
change edits one line and differs from every earlier text (no kept result answers it); the
time is from writing the didChange notification to reading the diagnostics published for
that version. Also timed: the first diagnostics after didOpen (the project model is built
then), and the engine alone on the same texts in this process (rocmlint.server.checking),
to show what the protocol adds. CPU times are given beside wall times (on a shared machine,
wall time less CPU time is time spent waiting for a core); the server's is read from /proc,
in clock ticks.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# A warp-level kernel: several findings each (32-bit masks, 32-lane numbering, a ballot kept
# in 32 bits).
WARP_KERNEL = """
// kernel {i}: a warp reduction, a ballot and a block-wide sum
__global__ void reduce_{i}(const float* __restrict__ in, float* out, int n) {{
  __shared__ float partial[32];
  int lane = threadIdx.x & 31;
  float v = threadIdx.x < n ? in[blockIdx.x * blockDim.x + threadIdx.x] : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2) {{
    v += __shfl_xor_sync(0xffffffff, v, offset);
  }}
  unsigned vote = __ballot_sync(0xffffffff, v > 0.0f);
  if (lane == 0) partial[threadIdx.x / 32] = v + __popc(vote);
  __syncthreads();
  if (threadIdx.x == 0) {{
    float total = 0.0f;
    for (int w = 0; w < blockDim.x / 32; ++w) total += partial[w];
    out[blockIdx.x] = total;
  }}
}}
"""
# Ordinary device code: no finding.
PLAIN_KERNEL = """
// kernel {i}: a scaled, clamped element-wise update with a grid-stride loop
template <typename T>
__global__ void axpy_clamp_{i}(int n, T alpha, const T* __restrict__ x, T* __restrict__ y, T lo, T hi) {{
  for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += blockDim.x * gridDim.x) {{
    T value = alpha * x[idx] + y[idx];
    y[idx] = value < lo ? lo : (value > hi ? hi : value);
  }}
}}

void launch_axpy_clamp_{i}(int n, float alpha, const float* x, float* y, cudaStream_t stream) {{
  int threads = 256;
  int blocks = (n + threads - 1) / threads;
  axpy_clamp_{i}<float><<<blocks, threads, 0, stream>>>(n, alpha, x, y, -1.0f, 1.0f);
}}
"""
HEADER = "#include <cuda_runtime.h>\n#include <cub/cub.cuh>\n#include <cublas_v2.h>\n"
# A project being ported (no ROCm side yet): every check runs, none is held back as preview.
CMAKE = """cmake_minimum_required(VERSION 3.24)
project(bench LANGUAGES CXX CUDA)
add_library(bench SHARED csrc/kernels.cu)
"""


def make_source(lines: int, warp_every: int) -> str:
    """`lines` lines of kernels, one warp-level kernel in `warp_every` (1: all of them)."""
    parts = [HEADER]
    i = 0
    while sum(p.count("\n") for p in parts) < lines:
        parts.append((WARP_KERNEL if i % warp_every == 0 else PLAIN_KERNEL).format(i=i))
        i += 1
    text = "".join(parts)
    return "\n".join(text.split("\n")[:lines]) + "\n"


class Client:
    """Content-Length framed JSON-RPC over the server's stdin and stdout."""

    def __init__(self, cwd: Path):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rocmlint", "server"], cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        self.next_id = 0

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode("utf-8")
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def receive(self) -> dict:
        length = None
        while True:
            line = self.process.stdout.readline().strip()
            if not line:
                break
            name, value = line.decode("ascii").split(":", 1)
            if name.lower() == "content-length":
                length = int(value)
        message = json.loads(self.process.stdout.read(length))
        if "method" in message and "id" in message:  # a request of the server's: answer it
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        return message

    def request(self, method: str, params) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            message = self.receive()
            if message.get("id") == self.next_id and "method" not in message:
                return message

    def diagnostics(self, uri: str, version: int) -> list:
        while True:
            message = self.receive()
            params = message.get("params") or {}
            if message.get("method") == "textDocument/publishDiagnostics" and params.get("uri") == uri and params.get("version") == version:
                return params["diagnostics"]


def cpu_seconds(pid: int) -> float | None:
    """User and system CPU time of a process so far (Linux: /proc/PID/stat), or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def summary(times: list[float]) -> str:
    ordered = sorted(times)
    p90 = ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]
    return f"median {statistics.median(ordered) * 1000:.0f} ms, p90 {p90 * 1000:.0f} ms, max {ordered[-1] * 1000:.0f} ms"


def measure(lines: int, changes: int, warp_every: int) -> None:
    source = make_source(lines, warp_every)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "csrc").mkdir()
        path = root / "csrc" / "kernels.cu"
        path.write_text(source, encoding="utf-8")
        (root / "CMakeLists.txt").write_text(CMAKE, encoding="utf-8")
        uri = path.as_uri()
        client = Client(root)
        client.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {}})
        client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        started = time.perf_counter()
        client.send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                     "params": {"textDocument": {"uri": uri, "languageId": "cuda-cpp", "version": 1, "text": source}}})
        found = client.diagnostics(uri, 1)
        opened = time.perf_counter() - started
        source_lines = source.split("\n")
        texts = []
        for version in range(2, changes + 2):
            edited = source_lines.copy()
            where = (version * 37) % (len(source_lines) - 1)
            edited[where] = edited[where] + f"  // edit {version}"
            texts.append("\n".join(edited))
        times, server_cpu = [], []
        counts = set()
        for version, text in enumerate(texts, start=2):
            started, cpu = time.perf_counter(), cpu_seconds(client.process.pid)
            client.send({"jsonrpc": "2.0", "method": "textDocument/didChange",
                         "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}})
            counts.add(len(client.diagnostics(uri, version)))
            times.append(time.perf_counter() - started)
            if cpu is not None:
                server_cpu.append(cpu_seconds(client.process.pid) - cpu)
        client.request("shutdown", None)
        client.send({"jsonrpc": "2.0", "method": "exit", "params": None})
        client.process.wait(timeout=30)

        here = os.getcwd()
        os.chdir(root)
        try:
            from rocmlint.server.checking import DocumentChecker

            checker = DocumentChecker()
            checker.workspace_folders = [str(root)]
            checker.check(str(path), source)
            engine_times, engine_cpu = [], []
            for text in texts:
                started, cpu = time.perf_counter(), time.process_time()
                checker.check(str(path), text)
                engine_times.append(time.perf_counter() - started)
                engine_cpu.append(time.process_time() - cpu)
        finally:
            os.chdir(here)
    kind = "every kernel warp-level" if warp_every == 1 else f"one kernel in {warp_every} warp-level"
    print(f"{lines}-line .cu file, {kind}: {len(found)} diagnostics")
    print(f"  didOpen -> diagnostics (first check, project model built): {opened * 1000:.0f} ms")
    print(f"  didChange -> diagnostics, {len(times)} changes: {summary(times)} (diagnostics per change: {sorted(counts)})")
    if server_cpu:
        print(f"    the server's CPU time per change: {summary(server_cpu)}")
    print(f"  the engine alone on the same texts: {summary(engine_times)}; CPU time {summary(engine_cpu)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--changes", type=int, default=30)
    parser.add_argument("--warp-every", type=int, action="append",
                        help="one warp-level kernel in N (repeatable; default: 10, then 1, the worst case)")
    args = parser.parse_args()
    load = " ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "unknown"
    print(f"rocmlint server, python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load}")
    for warp_every in args.warp_every or [10, 1]:
        measure(args.lines, args.changes, max(1, warp_every))
    return 0


if __name__ == "__main__":
    sys.exit(main())
