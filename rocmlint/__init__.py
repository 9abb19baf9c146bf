"""rocmlint: find CUDA/NVIDIA-only code that breaks or slows down on AMD GPUs (ROCm/HIP).

Importing this package never imports torch; the optional runtime helpers live in
``rocmlint.runtime``.
"""

__version__ = "0.1.0"
# Where the project lives (pyproject.toml [project.urls] says the same; a test keeps them equal).
# Each check's documentation is its file under checks/ there.
REPOSITORY_URL = "https://github.com/rocmlint/rocmlint"
