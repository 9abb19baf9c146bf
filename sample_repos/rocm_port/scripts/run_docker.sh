#!/bin/bash
# Train in the project's container on every GPU of this machine, NVIDIA or AMD.
set -euo pipefail
if command -v nvidia-smi >/dev/null 2>&1; then
  # ok: ROCM310
  docker run --gpus all --rm -it -v "$PWD:/app" fastllm:cuda python3 -m fastllm.train "$@"
else
  docker run --device=/dev/kfd --device=/dev/dri --group-add video --rm -it -v "$PWD:/app" \
    fastllm:rocm python3 -m fastllm.train "$@"
fi
