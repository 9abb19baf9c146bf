"""Print the toolkit and GPUs of this machine, for bug reports."""

import os
import subprocess

import torch
from torch.utils.cpp_extension import CUDA_HOME, ROCM_HOME

if torch.version.hip:
    print(subprocess.check_output(["amd-smi", "list"], text=True))
    print("headers:", os.path.join(ROCM_HOME, "include"))
else:
    # ok: ROCM105
    print(subprocess.check_output(["nvidia-smi", "-L"], text=True))
    # ok: ROCM106
    print(subprocess.check_output(["nvcc", "--version"], text=True))
    # ok: ROCM107
    print("headers:", os.path.join(CUDA_HOME, "include"))
