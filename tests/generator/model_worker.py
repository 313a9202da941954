"""The child side of ``small_package.ModelRunner``: runs snippets, answers one JSON line each.

Each request is ``{"code": ..., "args": {...}}``. The snippet sees ``args``, ``model``
(``model("example.v1.Widget")`` returns the class), imports what else it needs, and
sets ``result`` to something JSON can carry. A pydantic ValidationError comes back as
``{"invalid": [{"loc", "type", "msg"}, ...]}``, anything else as ``{"error": traceback}``.
"""

from __future__ import annotations

import importlib
import json
import sys
import traceback
from typing import Any

from pydantic import ValidationError


def model(path: str) -> Any:
    """``"example.v1.Widget"`` -> the class ``flarekit_models.example.v1.Widget``."""
    module, name = path.rsplit(".", 1)
    return getattr(importlib.import_module(f"flarekit_models.{module}"), name)


def answer(request: dict[str, Any]) -> dict[str, Any]:
    namespace: dict[str, Any] = {"args": request["args"], "model": model}
    try:
        exec(request["code"], namespace)
    except ValidationError as exc:
        return {
            "invalid": [
                {"loc": list(e["loc"]), "type": e["type"], "msg": e["msg"]} for e in exc.errors()
            ]
        }
    except Exception:
        return {"error": traceback.format_exc()}
    return {"result": namespace.get("result")}


def main() -> None:
    for line in sys.stdin:
        reply = answer(json.loads(line))
        try:
            text = json.dumps(reply)
        except TypeError:
            text = json.dumps({"error": f"result is not JSON: {reply.get('result')!r}"})
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
