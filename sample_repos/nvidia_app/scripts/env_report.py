"""Print the toolkit and GPUs of this machine, for bug reports."""

import os
import subprocess

from torch.utils.cpp_extension import CUDA_HOME

# ruleid: ROCM105
print(subprocess.check_output(["nvidia-smi", "-L"], text=True))
# ruleid: ROCM106
print(subprocess.check_output(["nvcc", "--version"], text=True))
# ruleid: ROCM107
print("headers:", os.path.join(CUDA_HOME, "include"))
