"""Training entry point: python -m fastllm.train --steps 100"""

import argparse

import torch
from torch import compile as jit

from fastllm.gpu_monitor import gpu_count, memory_used_gib
from fastllm.model import Block


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()

    device = "cuda" if gpu_count() > 0 else "cpu"
    model = torch.nn.Sequential(*[Block(512, 8) for _ in range(4)]).to(device)
    # ruleid: ROCM002
    model = torch.compile(model, mode="reduce-overhead", fullgraph=True)
    # ruleid: ROCM002
    loss_fn = jit(torch.nn.functional.mse_loss, mode="reduce-overhead")
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)

    for step in range(args.steps):
        x = torch.randn(8, 256, 512, device=device)
        loss = loss_fn(model(x), x)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f} mem {memory_used_gib():.2f} GiB")


if __name__ == "__main__":
    main()
