"""Command line: ``python -m flarekit_generator {schemas,generate}``."""

from __future__ import annotations

import argparse
import sys

from flarekit_generator.fetch import SchemaCacheError, run_schemas_command


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="flarekit-generate", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    schemas = commands.add_parser("schemas", help="fill and verify the pinned schema cache")
    schemas.add_argument("--offline", action="store_true", help="never download")
    commands.add_parser("generate", help="regenerate generated/flarekit_models")
    args = parser.parse_args(argv)
    if args.command == "schemas":
        return run_schemas_command(offline=args.offline)
    from flarekit_generator.pipeline import generate

    try:
        result = generate()
    except SchemaCacheError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(result.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
