"""CUDA-graph capture of one decode step."""

import torch


def capture_decode(model: torch.nn.Module, static_input: torch.Tensor) -> tuple[torch.cuda.CUDAGraph, torch.Tensor]:
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_output = model(static_input)
        # ruleid: ROCM010
        torch.cuda.synchronize()
    return graph, static_output


def compile_for_serving(model: torch.nn.Module) -> torch.nn.Module:
    # ruleid: ROCM101
    return torch.compile(model, mode="max-autotune")
