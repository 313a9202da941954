"""The training function the walkthrough submits: a tiny data-parallel PyTorch run.

Why a real one: on a real cluster the walkthrough's TrainJob must actually train something,
so the function below runs under ``torchrun`` on every node (flarekit sends its source as the
container command; see :class:`flarekit.TrainJob` ``func=``). It fits a straight line with
DistributedDataParallel on CPU (the ``gloo`` backend), so it needs no GPU and no data set.
On the practice cluster nothing runs: its simulated Trainer prints :func:`practice_log`,
which says so and invents no figures (local execution, where pods run as local processes,
is `flarekit_testing.TrainJobController(local=True)`).
"""

from __future__ import annotations

__all__ = ["practice_log", "train_line"]


def train_line(epochs: int = 3, steps: int = 20) -> None:
    """Fit y = 3x + 1 with DDP; rank 0 prints the loss after each epoch."""
    import os

    import torch  # type: ignore[import-not-found]
    import torch.distributed as dist  # type: ignore[import-not-found]
    from torch.nn.parallel import DistributedDataParallel  # type: ignore[import-not-found]

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(rank)
    model = DistributedDataParallel(torch.nn.Linear(1, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if rank == 0:
        print(f"training on {world} processes (node {os.environ.get('PET_NODE_RANK', '0')})")
    for epoch in range(1, epochs + 1):
        for _ in range(steps):
            x = torch.rand(64, 1)
            loss = torch.nn.functional.mse_loss(model(x), 3 * x + 1)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            print(f"epoch {epoch}/{epochs} loss={loss.item():.4f}")
    if rank == 0:
        weight, bias = (p.item() for p in model.module.parameters())
        print(f"done: y = {weight:.2f}x + {bias:.2f}")
    dist.destroy_process_group()


def practice_log(world: int = 2) -> list[str]:
    """What the practice cluster's simulated trainer pod prints: that it is simulated, and
    that :func:`train_line` did not run (no loss or fit is shown: none was computed)."""
    return [
        f"[simulated pod] the practice cluster's Trainer made this TrainJob's {world} node pods "
        "but runs no processes: train_line was not executed, so there is no training output.",
        "[simulated pod] On a real cluster (--kubeconfig) this log holds each epoch's loss.",
    ]
