"""Process-wide GPU settings, applied once before training starts.

The NVIDIA tuning stays for NVIDIA; ROCm gets its own settings (allocator, visibility) or is
left at PyTorch's defaults (TF32, cuDNN/MIOpen search, inductor CUDA graphs).
"""

import os

import torch
import torch._inductor.config as inductor_config

IS_ROCM = torch.version.hip is not None


def configure(rank: int = 0) -> None:
    if IS_ROCM:
        os.environ.setdefault("PYTORCH_HIP_ALLOC_CONF", "expandable_segments:True")
        os.environ["HIP_VISIBLE_DEVICES"] = str(rank)
        return
    # Measured on A100s: fewer OOMs from fragmentation with 512 MiB splits.
    # ok: ROCM006
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:512"
    # ok: ROCM108
    os.environ["CUDA_VISIBLE_DEVICES"] = str(rank)
    # ok: ROCM007
    torch.backends.cuda.matmul.allow_tf32 = True
    # ok: ROCM007
    torch.set_float32_matmul_precision("high")
    # ok: ROCM008
    torch.backends.cudnn.benchmark = True
    # ok: ROCM009
    inductor_config.triton.cudagraphs = True


def device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"
