"""What the walkthrough runs: a tiny data-parallel PyTorch training function, and a Ray job.

Why real ones: on the practice cluster (local execution) and on a real cluster alike, the
walkthrough's TrainJob trains and its RayJob computes, so what they print is what they did.
The training function runs under ``torchrun`` on every node (flarekit sends its source as
the container command; see :class:`flarekit.TrainJob` ``func=``): it fits a straight line
with DistributedDataParallel on CPU (the ``gloo`` backend), so it needs no GPU and no data
set, from random data drawn with `seed`, and rank 0 prints each epoch's loss. The Ray job
squares numbers in Ray tasks spread over the cluster and prints what Ray reports.
"""

from __future__ import annotations

__all__ = ["RAY_ENTRYPOINT", "train_line"]


def train_line(epochs: int = 3, steps: int = 20, seed: int = 0) -> None:
    """Fit y = 3x + 1 with DDP on data drawn from `seed`; rank 0 prints the loss after each
    epoch and the fitted line."""
    import os
    import warnings

    # torch warns when NumPy is not installed; this function does not use it.
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
    import torch  # type: ignore[import-not-found]
    import torch.distributed as dist  # type: ignore[import-not-found]
    from torch.nn.parallel import DistributedDataParallel  # type: ignore[import-not-found]

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(seed * 1000 + rank)
    model = DistributedDataParallel(torch.nn.Linear(1, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if rank == 0:
        node = os.environ.get("PET_NODE_RANK", "0")
        print(f"training on {world} processes (node {node}), seed {seed}", flush=True)
    for epoch in range(1, epochs + 1):
        for _ in range(steps):
            x = torch.rand(64, 1)
            loss = torch.nn.functional.mse_loss(model(x), 3 * x + 1)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            print(f"epoch {epoch}/{epochs} loss={loss.item():.4f}", flush=True)
    if rank == 0:
        weight, bias = (p.item() for p in model.module.parameters())
        print(f"done: y = {weight:.2f}x + {bias:.2f}", flush=True)
    dist.destroy_process_group()


#: The Ray job's entrypoint: squares in Ray tasks, and what the cluster offers.
RAY_ENTRYPOINT = (
    'python -c "import ray; ray.init(); square = ray.remote(lambda x: x * x); '
    "print('sum of the squares of 0..99, computed in Ray tasks:', "
    "sum(ray.get([square.remote(i) for i in range(100)]))); "
    "print('cluster resources:', ray.cluster_resources())\""
)
