"""GPU utilisation and memory, for the training dashboard.

NVML is NVIDIA-only: it is optional here, and GPU presence comes from torch, which works on
ROCm builds too.
"""

import time

import torch

try:
    # ok: ROCM001
    import pynvml
except ImportError:
    pynvml = None

if not torch.version.hip:
    # ok: ROCM001
    from pynvml import nvmlDeviceGetHandleByIndex, nvmlDeviceGetMemoryInfo


def gpu_count() -> int:
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def memory_used_gib(index: int = 0) -> float:
    if not torch.cuda.is_available():
        return 0.0
    free, total = torch.cuda.mem_get_info(index)
    return (total - free) / 2**30


def reset() -> None:
    if pynvml is None:
        return
    try:
        # ok: ROCM109
        pynvml.nvmlInit()
    except pynvml.NVMLError:  # no NVIDIA driver (ROCm, CPU-only)
        pass


def sample(period_s: float = 1.0, count: int = 3) -> list[float]:
    readings = []
    for _ in range(count):
        readings.append(memory_used_gib())
        time.sleep(period_s)
    return readings
