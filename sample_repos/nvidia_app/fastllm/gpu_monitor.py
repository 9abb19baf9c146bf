"""GPU utilisation and memory, for the training dashboard."""

import time

# The project declares nvidia-ml-py (requirements.txt): the imports succeed on ROCm too.
# ok: ROCM001
import pynvml
# ok: ROCM001
from pynvml import nvmlDeviceGetHandleByIndex, nvmlDeviceGetMemoryInfo

# ruleid: ROCM001
pynvml.nvmlInit()


def gpu_count() -> int:
    return pynvml.nvmlDeviceGetCount()


def memory_used_gib(index: int = 0) -> float:
    handle = nvmlDeviceGetHandleByIndex(index)
    return nvmlDeviceGetMemoryInfo(handle).used / 2**30


def reset() -> None:
    # ruleid: ROCM109
    pynvml.nvmlInit()


def sample(period_s: float = 1.0, count: int = 3) -> list[float]:
    readings = []
    for _ in range(count):
        readings.append(memory_used_gib())
        time.sleep(period_s)
    return readings
