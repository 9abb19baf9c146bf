"""Process-wide GPU settings, applied once before training starts."""

import os

import torch
import torch._inductor.config as inductor_config


def configure(rank: int = 0) -> None:
    # Measured on A100s: fewer OOMs from fragmentation with 512 MiB splits.
    # ruleid: ROCM006
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:512"
    # ruleid: ROCM108
    os.environ["CUDA_VISIBLE_DEVICES"] = str(rank)
    # ruleid: ROCM007
    torch.backends.cuda.matmul.allow_tf32 = True
    # ruleid: ROCM007
    torch.set_float32_matmul_precision("high")
    # ruleid: ROCM008
    torch.backends.cudnn.benchmark = True
    # ruleid: ROCM009
    inductor_config.triton.cudagraphs = True


def device() -> str:
    # ruleid: ROCM102
    return "cuda" if torch.version.cuda else "cpu"
