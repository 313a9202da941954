"""The real pipeline on the pinned lock: deterministic output and the size budget."""

from __future__ import annotations

import hashlib
from pathlib import Path

from flarekit_generator.k8s_types import KubernetesDefinitions
from flarekit_generator.pipeline import generate


def _digest_tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_two_runs_give_identical_bytes(tmp_path: Path) -> None:
    defs = KubernetesDefinitions.load()
    first = generate(out_dir=tmp_path / "one", defs=defs)
    second = generate(out_dir=tmp_path / "two", defs=defs)
    one = _digest_tree(tmp_path / "one")
    assert one == _digest_tree(tmp_path / "two")
    assert len(one) > 100
    assert first.classes == second.classes < 800
    assert first.stats.code_lines < 15_000
    assert f"generated {tmp_path / 'one' / 'flarekit_models'}: 16 modules" in first.summary()
