"""The ``rntuple`` command line (``python -m rntuple``).

Every subcommand and its arguments are defined once, in the command registry
of the Rust core (``rntuple_tools::cli``, clap), which also prints the help
and the usage errors. ``_lib.cli_main`` parses the command line there and runs
the Rust subcommands (``ls``, ``show``, ``dump``, ``inspect``, ``verify``,
``merge``); for ``convert``, ``draw``, ``browse`` and ``study`` it returns their parsed arguments and
they run here, in Python (they use uproot, pyarrow and matplotlib). The
argument values whose meaning belongs to this package (compression names,
memory sizes) are checked here and reported as usage errors in the
registry's format.

Exit status: 0 on success, 1 when the work fails (the message says why, no
traceback), 2 for usage errors, 130 when interrupted (Ctrl-C), 143 on SIGTERM.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from . import _lib
from ._errors import InvalidArgumentError

__all__ = ["main"]

PROG = "rntuple"


class _UsageError(InvalidArgumentError):
    """A value the registry accepted but this package does not (exit status 2)."""


def _compression(text: str) -> str:
    from ._write_options import compression_setting

    try:
        compression_setting(text)
    except (_lib.RNTupleError, TypeError, ValueError) as err:
        raise _UsageError(str(err)) from None
    return text


def _size(text: str) -> str:
    from ._filters import parse_memory_size

    try:
        if parse_memory_size(text) <= 0:
            raise InvalidArgumentError(f"must be positive, not {text!r}")
    except ValueError as err:
        raise _UsageError(str(err)) from None
    return text


def _step(text: str) -> int | str:
    if text.strip().isdigit():
        if int(text) < 1:
            raise _UsageError(f"must be at least 1, not {text}")
        return int(text)
    return _size(text)


def _value(option: str, check: Callable[[str], Any], text: str | None) -> Any:
    """``check(text)``, with a failure named after ``option`` (``None`` passes)."""
    if text is None:
        return None
    try:
        return check(text)
    except _UsageError as err:
        raise _UsageError(f"argument {option}: {err}") from None


def _message(err: BaseException) -> str:
    if isinstance(err, OSError) and err.filename is not None:
        return f"{err.filename}: {err.strerror or err}"
    if isinstance(err, KeyError) and err.args:
        return str(err.args[0])
    return str(err) or type(err).__name__


def _convert(args: dict[str, Any]) -> None:
    from . import _convert

    result = _convert.convert(
        args["inputs"],
        args["output"],
        name=args["name"],
        compression=_value("--compression/-c", _compression, args["compression"]),
        cluster_size=_value("--cluster-size", _size, args["cluster_size"]),
        step_size=_value("--step-size", _step, args["step_size"]),
        progress=args["progress"],
    )
    if not args["quiet"]:
        print(_convert.describe(result))


def _draw(args: dict[str, Any]) -> None:
    from . import _draw

    start, stop = args["entries"] or (None, None)
    sources = args["sources"]
    hist = _draw.draw(
        sources[0] if len(sources) == 1 else sources,
        args["expression"],
        args["output"],
        cut=args["cut"],
        bins=args["bins"],
        range=tuple(args["range"]) if args["range"] else None,
        entry_start=start,
        entry_stop=stop,
        title=args["title"],
        logy=args["logy"],
        progress=args["progress"],
        verify_checksums=args["verify_checksums"],
    )
    if args["json"]:
        print(json.dumps(hist.to_dict()))
    elif not args["quiet"]:
        print(f"wrote {args['output']}: {hist.summary()}")


def _browse(args: dict[str, Any]) -> None:
    from . import browse

    browse.main(args)


def _study(args: dict[str, Any]) -> None:
    from . import study

    kind, target = args["study"], args["target"]
    if kind == "knobs" and target is None:
        raise _UsageError("study knobs needs the RNTuple to rewrite: rntuple study knobs FILE[:NAME] -o DIR")
    if kind == "layout" and target is not None:
        raise _UsageError(f"study layout generates its data and takes no FILE (got {target!r}); did you mean knobs?")
    wrong = {"layout": ("entries",), "knobs": ("events", "threads")}[kind]
    for name in wrong:
        if args[name] is not None:
            raise _UsageError(f"argument --{name}: not an option of study {kind}")
    common = {"runs": args["runs"], "seed": args["seed"], "quick": args["quick"], "progress": args["progress"]}
    if kind == "layout":
        result = study.layout(args["output"], events=args["events"], threads=args["threads"], **common)
    else:
        result = study.knobs(target, args["output"], optimize=args["optimize"], entries=args["entries"], **common)
    if not args["quiet"]:
        print(f"wrote {result['report']['markdown']}, {result['report']['html']} and {result['report']['json']}")
        if kind == "knobs":
            print(f"recommended for {args['optimize']}: {result['recommendation']}")


# The subcommands of the registry implemented here.
_COMMANDS: dict[str, Callable[[dict[str, Any]], None]] = {
    "convert": _convert,
    "draw": _draw,
    "browse": _browse,
    "study": _study,
}


def _run(command: str, args: dict[str, Any], usage: str) -> int:
    expected = (_lib.RNTupleError, OSError, KeyError, ValueError, ImportError)
    prog = f"{PROG} {command}"
    try:
        _COMMANDS[command](args)
    except _UsageError as err:
        # The format of the registry's usage errors.
        sys.stderr.write(f"usage: {usage}\n{prog}: error: {err}\n")
        return 2
    except KeyboardInterrupt:
        print(f"\n{prog}: interrupted", file=sys.stderr)
        return 130
    except expected as err:
        print(f"{prog}: error: {_message(err)}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> NoReturn:
    """Runs the ``rntuple`` command with ``argv`` (default ``sys.argv``) and exits with its status."""
    args = list(sys.argv if argv is None else argv)
    if not args or os.path.basename(args[0]) in ("__main__.py", "-m", "-c"):
        args[:1] = [PROG]
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        result = _lib.cli_main(args)
    except KeyboardInterrupt:
        # The Rust command has cleaned up and said so; Python saw the same SIGINT.
        raise SystemExit(130) from None
    if isinstance(result, int):
        raise SystemExit(result)
    command, parsed, usage = result
    raise SystemExit(_run(command, parsed, usage))


if __name__ == "__main__":
    main()
