"""rocmlint: find CUDA/NVIDIA-only code that breaks or slows down on AMD GPUs (ROCm/HIP).

Importing this package never imports torch; the optional runtime helpers live in
``rocmlint.runtime``.
"""

__version__ = "0.1.0"
