"""CUDA-graph capture of one decode step."""

import torch


def capture_decode(model: torch.nn.Module, static_input: torch.Tensor) -> tuple[torch.cuda.CUDAGraph, torch.Tensor]:
    static_output = model(static_input)  # warm-up outside capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_output = model(static_input)
    return graph, static_output


def compile_for_serving(model: torch.nn.Module) -> torch.nn.Module:
    # HIP graphs under torch.compile are release-dependent on ROCm: tune without them there.
    mode = "max-autotune-no-cudagraphs" if torch.version.hip else "max-autotune"
    # ok: ROCM101
    return torch.compile(model, mode=mode)
