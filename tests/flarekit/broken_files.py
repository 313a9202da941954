"""Files broken in the ways files break, for the tests that feed them to flarekit: a byte
changed, a hostile snippet put in at a line or anywhere, a cut, a key repeated, another
encoding."""

from __future__ import annotations

import random
from collections.abc import Sequence

SNIPPETS = [
    b"&a [*a]", b"*nowhere", b"!!python/object/apply:os.system ['true']", b"{", b"[", b"]",
    b"\x00", b"\t", b": :", b"---\n", b"...\n", b"%YAML 1.1\n", b"!!binary zz", b"9" * 5000,
    b".nan", b"2024-02-30", b"- ", b"? ", b"\xef\xbb\xbf", b"\xed\xa0\x80", b"\xff\xfe",
    b"<<: *nowhere", b"<<: [1]", b"!custom {}", b"'", b'"\\x', b"|\n", b">-\n  ", b"@",
    b"key: 1e400", b"key: [" + b"[" * 3000, b"name: {a: 1}", b"name: again",
]  # fmt: skip


def broken(valid: bytes, rng: random.Random, snippets: Sequence[bytes] = ()) -> bytes:
    """``valid`` with one to three breakages; ``snippets`` are put in besides ``SNIPPETS``
    (values of the file's own keys, say)."""
    pool = [*SNIPPETS, *snippets]
    data = valid
    for _ in range(rng.randint(1, 3)):
        how = rng.randrange(6)
        at = rng.randrange(len(data) + 1)
        if how == 0 and data:
            at = min(at, len(data) - 1)
            data = data[:at] + bytes([rng.randrange(256)]) + data[at + 1 :]
        elif how == 1:
            lines = data.split(b"\n")
            lines.insert(rng.randrange(len(lines)), rng.choice(pool))
            data = b"\n".join(lines)
        elif how == 2:
            data = data[:at] + rng.choice(pool) + data[at:]
        elif how == 3:
            data = data[:at]
        elif how == 4:
            first = data.split(b"\n", 1)[0]
            data += b"\n" + first + b"\n"
        else:
            encoding = rng.choice(["utf-16", "utf-32", "latin-1", "utf-16-be"])
            data = data.decode("utf-8", "replace").encode(encoding, "replace")
    return data
