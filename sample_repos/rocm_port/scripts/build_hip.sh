#!/bin/bash
# AMD build: the targets are the GPUs of this machine unless PYTORCH_ROCM_ARCH says otherwise.
set -euo pipefail
# ok: ROCM302
export PYTORCH_ROCM_ARCH="${PYTORCH_ROCM_ARCH:-gfx90a;gfx942;gfx950}"
pip install --no-deps --no-build-isolation -e .
