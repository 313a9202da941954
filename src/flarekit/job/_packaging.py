"""A Python function turned into a container command, for training jobs without an image build.

The Kubeflow SDK packages a training function by sending its source (``inspect.getsource``)
plus a call, written to a file through a bash heredoc whose delimiter is unquoted, so the
shell expands ``$`` and backticks inside the user's code. Here the code travels as one argv
element of ``python -c`` (no shell, nothing expanded or re-quoted), behind the launcher the
runtime's ML policy needs: ``torchrun --no-python python -c ...`` for torch (torchrun reads the
``PET_*`` variables Trainer injects), ``mpirun --hostfile ... python -c ...`` for MPI, and
plain ``python -c`` otherwise.

Only what can be rebuilt from source in a fresh interpreter is accepted: a named, top-level or
nested plain function without decorators, free variables (closures) or names from its module
(imports belong inside the function), called with keyword arguments that are Python literals.
Everything else is refused with the reason, before anything is sent.
"""

from __future__ import annotations

import ast
import builtins
import dis
import inspect
import textwrap
import types
from collections.abc import Callable, Mapping, Sequence

__all__ = ["PackagingError", "function_command", "function_script"]

#: How each ML policy launches the packaged code (the code follows as `-c <code>`).
_LAUNCHERS: dict[str, tuple[str, ...]] = {
    "torch": ("torchrun", "--no-python", "python"),
    "mpi": ("mpirun", "--hostfile", "/etc/mpi/hostfile", "python"),
}
_PLAIN = ("python",)


class PackagingError(ValueError):
    """The function cannot be sent as source; the message says why and what to do."""


def _global_names(code: types.CodeType) -> set[str]:
    names = {
        str(ins.argval)
        for ins in dis.get_instructions(code)
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME")
    }
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def _check_literal(name: str, value: object) -> None:
    text = repr(value)
    try:
        same = ast.literal_eval(text) == value
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        same = False
    if not same:
        raise PackagingError(
            f"func_args[{name!r}]={text[:60]}: not a Python literal; pass numbers, strings, "
            "booleans, None, and lists/tuples/dicts/sets of them"
        )


def function_script(
    func: Callable[..., object], func_args: Mapping[str, object] | None = None
) -> str:
    """The source of `func` followed by a call with `func_args` as keyword arguments."""
    if not isinstance(func, types.FunctionType):
        raise PackagingError(
            f"func={func!r}: expected a plain Python function (def ...), got "
            f"{type(func).__name__}; bound methods, builtins and callable objects have no "
            "source that runs on its own"
        )
    name = func.__name__
    if name == "<lambda>":
        raise PackagingError(
            "func: a lambda cannot be packaged (its source is part of another expression); "
            "define it with def"
        )
    if func.__closure__:
        free = ", ".join(func.__code__.co_freevars)
        raise PackagingError(
            f"func={name}: a closure over {free}; those values would not exist in the "
            "container. Pass them through func_args instead"
        )
    if inspect.iscoroutinefunction(func) or inspect.isgeneratorfunction(func):
        raise PackagingError(f"func={name}: expected a plain function, not async or a generator")
    try:
        source = textwrap.dedent(inspect.getsource(func))
    except (OSError, TypeError) as exc:
        raise PackagingError(
            f"func={name}: its source is not available ({exc}); define it in a file or a "
            "notebook cell"
        ) from None
    tree = ast.parse(source)
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.FunctionDef) or node.name != name:
        raise PackagingError(f"func={name}: its source does not start with 'def {name}('")
    if node.decorator_list:
        raise PackagingError(
            f"func={name}: decorated functions are not packaged (the decorator would not "
            "exist in the container); pass the undecorated function"
        )
    outside = sorted(_global_names(func.__code__) - set(dir(builtins)) - {name})
    if outside:
        raise PackagingError(
            f"func={name}: uses names defined outside it: {', '.join(outside)}; import or "
            "define them inside the function, or pass values through func_args"
        )
    arguments = dict(func_args or {})
    for key, value in arguments.items():
        if not isinstance(key, str) or not key.isidentifier():
            raise PackagingError(f"func_args: {key!r} is not a parameter name")
        _check_literal(key, value)
    try:
        inspect.signature(func).bind(**arguments)
    except TypeError as exc:
        raise PackagingError(
            f"func_args do not fit {name}{inspect.signature(func)}: {exc}"
        ) from None
    call = f"{name}(**{arguments!r})" if arguments else f"{name}()"
    return f"{source.rstrip()}\n\n\n{call}\n"


def function_command(
    func: Callable[..., object],
    func_args: Mapping[str, object] | None = None,
    *,
    policy: str = "plain",
    launcher: Sequence[str] | None = None,
) -> list[str]:
    """The container command that runs `func(**func_args)` under the runtime's ML policy
    (``torch``, ``mpi``, anything else: plain python); `launcher` overrides the prefix."""
    prefix = tuple(launcher) if launcher is not None else _LAUNCHERS.get(policy, _PLAIN)
    return [*prefix, "-c", function_script(func, func_args)]
