#!/bin/bash
# An early attempt at an AMD build: compiles the extension for the Instinct GPUs of 2023.
set -euo pipefail
# ruleid: ROCM302
export PYTORCH_ROCM_ARCH="gfx90a;gfx942"
pip install --no-deps --no-build-isolation -e .
