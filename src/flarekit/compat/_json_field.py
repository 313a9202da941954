"""The types of free-form JSON fields in the small models compat writes for itself.

Why: the type checker should see such a field as :data:`flarekit._json.JsonValue` (so a value
is narrowed before use), but pydantic cannot build a validator for that recursive alias; the
generated models' own JSON types check the value (JSON the API server would take) and keep
it as given. So the two names below mean the first to mypy and the second to pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["JsonField", "JsonFields"]

if TYPE_CHECKING:
    from flarekit._json import JsonObject as JsonFields
    from flarekit._json import JsonValue as JsonField
else:
    from flarekit_models import JsonObject as JsonFields
    from flarekit_models import JsonValue as JsonField
