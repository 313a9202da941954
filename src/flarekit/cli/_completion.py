"""``flarekit completion bash|zsh|fish``: TAB completion of commands, options and choices.

Load it in the shell's start-up file::

    source <(flarekit completion bash)            # ~/.bashrc
    source <(flarekit completion zsh)             # ~/.zshrc, after compinit
    flarekit completion fish | source             # ~/.config/fish/config.fish

The shell code is argcomplete's, in the ``completion`` extra (``pip install
'flarekit[completion]'``). argcomplete is dynamic: on TAB the shell asks ``flarekit`` itself,
which answers from the same argparse parser that parses the command, so completion can never
disagree with the installed version. It was chosen over shtab, which writes static scripts
from the parser and so costs nothing per TAB, because shtab has no fish support; the cost here
is one start of ``flarekit`` per TAB.
It is an extra because a plain ``pip install flarekit`` is held to 20 distributions.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable

from flarekit.cli._common import plain_text
from flarekit.cli._exit import UsageError

__all__ = ["SHELLS", "complete_if_asked", "register"]

SHELLS = ("bash", "zsh", "fish")
#: Set by the shell code when it asks ``flarekit`` for completions.
_ASKED = "_ARGCOMPLETE"
_INSTALL = "shell completion needs argcomplete: pip install 'flarekit[completion]'"


def complete_if_asked(parser: Callable[[], argparse.ArgumentParser]) -> None:
    """When the shell asks for completions, print them and end the process (argcomplete
    does); otherwise do nothing, without importing argcomplete or building the parser
    (``parser`` makes it: every command's arguments, a tenth of a command's start-up)."""
    if _ASKED not in os.environ:
        return
    try:
        import argcomplete
    except ImportError:
        return  # no completions rather than an error in the middle of the user's line
    argcomplete.autocomplete(parser())


def _run(args: argparse.Namespace) -> int:
    try:
        from argcomplete.shell_integration import shellcode
    except ImportError:
        raise UsageError(_INSTALL) from None
    args.out.write(shellcode(["flarekit"], shell=args.shell))
    args.out.flush()
    return 0


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``completion SHELL``."""
    p = commands.add_parser(
        "completion",
        help="shell code for TAB completion (bash, zsh or fish)",
        description=plain_text(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    p.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks"
    )
    p.set_defaults(run=_run)
