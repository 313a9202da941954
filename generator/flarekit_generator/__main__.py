"""flarekit-generate: pydantic models from pinned upstream CRDs.

flarekit-generate [generate] [--package NAME] [--families A,B] [--out DIR] [--force]
    generate the models (by default every pinned family, as flarekit_models under the
    repository's generated/); --package and --families vendor a subset under another name;
    a package whose inputs have not changed since it was written is left as it is (--force
    writes it anyway)
flarekit-generate schemas
    fill and verify the schema cache from the lock file
flarekit-generate pin FAMILY TAG [--replace OLD_TAG]
    pin a new upstream release in the lock file, regenerate, and report the fields that
    appeared or disappeared per kind
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from flarekit_generator import __version__, paths

_COMMANDS = ("generate", "schemas", "pin")


def _families(value: str) -> list[str]:
    names = [name.strip() for name in value.split(",") if name.strip()]
    if not names:
        raise argparse.ArgumentTypeError("expected a comma-separated list such as kuberay,kueue")
    return names


def _add_sources(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--lock", type=Path, help="lock file (default: the repository's, or the one shipped)"
    )
    parser.add_argument("--cache", type=Path, help="schema cache directory")
    parser.add_argument(
        "--mirror", type=Path, help=f"offline mirror <family>/<tag>/<file> (${paths.MIRROR_ENV})"
    )
    parser.add_argument("--offline", action="store_true", help="never download")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="flarekit-generate",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"flarekit-generator {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    generate = commands.add_parser("generate", help="generate a models package (the default)")
    generate.add_argument(
        "--package",
        default="flarekit_models",
        help="import name of the package to write, e.g. mysdk._crds (default: flarekit_models)",
    )
    generate.add_argument(
        "--families", type=_families, help="comma-separated families (default: every pinned one)"
    )
    generate.add_argument(
        "--out", type=Path, help="directory the package is written below (default: generated/)"
    )
    generate.add_argument(
        "--force", action="store_true", help="regenerate even if nothing it is made from changed"
    )
    _add_sources(generate)

    schemas = commands.add_parser("schemas", help="fill and verify the pinned schema cache")
    _add_sources(schemas)

    pin = commands.add_parser("pin", help="pin a new release, regenerate and report field changes")
    pin.add_argument("family", help="a family the lock file pins, e.g. kuberay")
    pin.add_argument("tag", help="the upstream release tag to pin, e.g. v1.8.0")
    pin.add_argument("--replace", metavar="OLD_TAG", help="move this pinned release instead")
    pin.add_argument(
        "--path",
        action="append",
        default=[],
        dest="files",
        help="a CRD file of the release (repeatable; default: those of the release before)",
    )
    pin.add_argument("--commit", help="the commit the tag points at (default: ask GitHub's API)")
    pin.add_argument("--out", type=Path, help="where to regenerate (default: generated/)")
    pin.add_argument("--no-generate", action="store_true", help="only update the lock file")
    _add_sources(pin)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list or args_list[0] not in (*_COMMANDS, "-h", "--help", "--version"):
        args_list.insert(0, "generate")  # `flarekit-generate --package ...` generates
    args = build_parser().parse_args(args_list)
    if args.command == "generate" and _up_to_date(args):
        return 0
    # Imported only now: the generator's modules (jinja2, ruff, the Kubernetes definitions)
    # cost more than the check that most runs of `make generate` end with.
    from flarekit_generator.emit import OutputError
    from flarekit_generator.fetch import SchemaCacheError
    from flarekit_generator.lockfile import LockFileError

    try:
        if args.command == "schemas":
            return _schemas(args)
        if args.command == "pin":
            return _pin(args)
        return _generate(args)
    except (LockFileError, SchemaCacheError, OutputError) as error:
        print(f"flarekit-generate: error: {error}", file=sys.stderr)
        return 1


def _sources(args: argparse.Namespace) -> tuple[Path, Path, Path | None]:
    mirror = args.mirror or paths.mirror_dir()
    return args.lock or paths.lock_file(), args.cache or paths.cache_dir(), mirror


def _schemas(args: argparse.Namespace) -> int:
    from flarekit_generator.fetch import run_schemas_command

    return run_schemas_command(
        offline=args.offline, lock=args.lock, cache_dir=args.cache, mirror=args.mirror
    )


def _stamp_inputs(args: argparse.Namespace) -> tuple[Path, str] | None:
    """Where the stamp of this run's package is, and the digest of its inputs (None when
    there is no output directory yet: generate() reports that)."""
    from flarekit_generator import stamp

    out = args.out or paths.output_dir()
    if out is None:
        return None
    lock = args.lock or paths.lock_file()
    inputs = stamp.input_digest(lock, paths.runtime_dir(), args.package, args.families)
    return stamp.stamp_path(out, args.package), inputs


def _up_to_date(args: argparse.Namespace) -> bool:
    """Whether the package this run would write is already on disk (then says so)."""
    from flarekit_generator import stamp

    found = None if args.force else _stamp_inputs(args)
    if found is None:
        return False
    out = args.out or paths.output_dir()
    assert out is not None
    package_dir = out.joinpath(*args.package.split("."))
    if not stamp.is_current(found[0], package_dir, found[1]):
        return False
    print(f"{package_dir} is up to date: nothing written (--force regenerates it)")
    return True


def _generate(args: argparse.Namespace) -> int:
    from flarekit_generator import stamp
    from flarekit_generator.pipeline import generate

    lock, cache, mirror = _sources(args)
    out = args.out or paths.output_dir()
    found = _stamp_inputs(args)
    result = generate(
        lock=lock,
        cache_dir=cache,
        out_dir=out,
        package=args.package,
        families=args.families,
        mirror=mirror,
        allow_download=not args.offline,
    )
    if found is not None:
        stamp.write_stamp(found[0], result.package_dir, found[1])
    print(result.summary())
    return 0


def _pin(args: argparse.Namespace) -> int:
    from flarekit_generator.fetch import download_base_url
    from flarekit_generator.pin import field_changes, plan_pin, write_lock
    from flarekit_generator.pipeline import generate

    lock, cache, mirror = _sources(args)
    plan = plan_pin(
        lock,
        args.family,
        args.tag,
        cache_dir=cache,
        mirror=mirror,
        base_url=download_base_url(),
        replace=args.replace,
        files=args.files,
        commit=args.commit,
        allow_download=not args.offline,
    )
    write_lock(lock, plan.new_entries)
    print(plan.summary(lock))
    if args.no_generate:
        return 0
    result = generate(
        lock=lock, cache_dir=cache, out_dir=args.out, mirror=mirror, allow_download=not args.offline
    )
    print(result.summary())
    print(f"fields of {args.family} {args.tag} against {plan.previous_tag}:")
    for change in field_changes(plan, cache, result.field_table, result.core_paths):
        print("\n".join(change.lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
