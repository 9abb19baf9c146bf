#!/bin/bash
# Train in the project's container on every GPU of this machine.
set -euo pipefail
# ruleid: ROCM310
docker run --gpus all --rm -it -v "$PWD:/app" fastllm:latest python3 -m fastllm.train "$@"
