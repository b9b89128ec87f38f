"""The ``rntuple`` command line (``python -m rntuple``).

``convert`` and ``draw`` are implemented here in Python (they use uproot,
pyarrow and matplotlib); every other subcommand (``ls``, ``show``, ``dump``,
...) is the Rust CLI's (``_lib.cli_main``). ``rntuple --help`` prints the Rust
CLI's help with the Python subcommands added to its list of commands.

Exit status: 0 on success, 1 when the work fails (the message says why, no
traceback), 2 for usage errors, 130 when interrupted (Ctrl-C), 143 on SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from typing import NoReturn

from . import _lib

__all__ = ["main"]

PROG = "rntuple"
# Subcommands implemented in Python: name -> one-line description (also shown by `rntuple --help`).
PYTHON_COMMANDS = {
    "convert": "Convert TTrees or Parquet files to an RNTuple, or an RNTuple to Parquet",
    "draw": "Histogram a field or an expression of fields into a PNG (like TTree::Draw)",
}
# Global options of the Rust CLI that may precede the subcommand.
_GLOBAL_FLAGS = ("--no-verify",)


class _Parser(argparse.ArgumentParser):
    """argparse with exit status 2 and the message on stderr for every usage error."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def _convert_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog=f"{PROG} convert",
        description=(
            "Convert TTrees (read with uproot) or Parquet files into one RNTuple, or an RNTuple into a Parquet "
            "file. The output is written to a temporary file beside OUT and renamed when complete; an existing "
            "OUT is replaced."
        ),
        epilog=(
            "examples:\n"
            "  rntuple convert nano.root:Events nano_rntuple.root\n"
            "  rntuple convert 'data/*.root:Events' all.root --compression zstd:7 --cluster-size '50 MB'\n"
            "  rntuple convert table.parquet table.root --name Events\n"
            "  rntuple convert nano_rntuple.root:Events nano.parquet"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "inputs",
        nargs="+",
        metavar="IN[:NAME]",
        help="input files (globs allowed), each optionally with ':NAME' of its TTree or RNTuple "
        "(default: the only one in the file)",
    )
    p.add_argument("output", metavar="OUT", help="output file: *.parquet (or .pq) writes Parquet, anything else ROOT")
    p.add_argument("--name", "-n", help="name of the RNTuple written (default: the TTree's name, else 'Events')")
    p.add_argument(
        "--compression",
        "-c",
        default="505",
        type=_compression,
        help="ROOT setting (505) or algorithm[:level]: zstd, zlib, lzma, lz4, none (default: 505 = zstd level 5)",
    )
    p.add_argument(
        "--cluster-size",
        metavar="SIZE",
        type=_size,
        help="approximate compressed cluster size, e.g. '50 MB' (default: ROOT's 128 MiB); "
        "for Parquet output the uncompressed size of a row group",
    )
    p.add_argument(
        "--step-size",
        default="100 MB",
        metavar="SIZE",
        type=_step,
        help="entries (an integer) or memory (e.g. '100 MB') read per step (default: 100 MB)",
    )
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar on stderr (default: when stderr is a terminal)",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="do not print the summary line")
    return p


def _draw_parser() -> argparse.ArgumentParser:
    from ._draw import FUNCTIONS

    p = _Parser(
        prog=f"{PROG} draw",
        description=(
            "Histogram EXPR over the entries of an RNTuple (where --cut holds) and write it as a PNG, like "
            "TTree::Draw. EXPR and the cut are expressions of top-level fields: numbers, + - * / // % **, "
            "comparisons, and/or/not, & | ~, field.member, field[i], and the functions "
            f"{', '.join(sorted(FUNCTIONS))}. Collections are flattened (per-entry values broadcast over them)."
        ),
        epilog=(
            "examples:\n"
            "  rntuple draw nano.root:Events Muon_pt -o muon_pt.png\n"
            "  rntuple draw nano.root:Events 'sqrt(Muon_pt**2 + Muon_eta**2)' --cut 'nMuon >= 2' "
            "--bins 50 --range 0 200 -o out.png"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("source", metavar="FILE[:NAME]", help="the file and its RNTuple (default: the only one)")
    p.add_argument("expression", metavar="EXPR", help="field or expression to histogram")
    p.add_argument("--output", "-o", required=True, metavar="PNG", help="the PNG file to write")
    p.add_argument("--cut", metavar="EXPR", help="selection: entries (or elements) where it is true / non-zero")
    p.add_argument("--bins", type=_positive_int, default=100, help="number of bins (default: 100)")
    p.add_argument(
        "--range",
        nargs=2,
        type=float,
        metavar=("LO", "HI"),
        help="histogram range (default: smallest to largest value)",
    )
    p.add_argument("--entries", metavar="A:B", type=_entry_range, help="entry range, like a Python slice")
    p.add_argument("--title", help="plot title (default: the RNTuple's name)")
    p.add_argument("--logy", action="store_true", help="logarithmic y axis")
    p.add_argument(
        "--json",
        action="store_true",
        help="print the histogram (counts, edges, underflow, overflow, entries, mean, std) as JSON on stdout",
    )
    p.add_argument("--no-verify", action="store_true", help="do not verify checksums")
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar on stderr (default: when stderr is a terminal)",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="do not print the summary line")
    return p


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _entry_range(text: str) -> tuple[int | None, int | None]:
    a, sep, b = text.partition(":")
    try:
        if not sep:
            raise ValueError
        return (int(a) if a.strip() else None, int(b) if b.strip() else None)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected A:B (either may be left out), not {text!r}") from None


def _compression(text: str) -> str:
    from ._convert import split_compression
    from ._write import compression_setting

    try:
        compression_setting(*split_compression(text))
    except (_lib.RNTupleError, TypeError, ValueError) as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def _size(text: str) -> str:
    from ._filters import parse_memory_size

    try:
        if parse_memory_size(text) <= 0:
            raise ValueError(f"must be positive, not {text!r}")
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def _step(text: str) -> int | str:
    if text.strip().isdigit():
        if int(text) < 1:
            raise argparse.ArgumentTypeError(f"must be at least 1, not {text}")
        return int(text)
    return _size(text)


def _message(err: BaseException) -> str:
    if isinstance(err, OSError) and err.filename is not None:
        return f"{err.filename}: {err.strerror or err}"
    if isinstance(err, KeyError) and err.args:
        return str(err.args[0])
    return str(err) or type(err).__name__


def _run(command: str, argv: list[str], verify: bool) -> int:
    from . import _convert, _draw

    expected = (_lib.RNTupleError, OSError, KeyError, ValueError, ImportError)
    prog = f"{PROG} {command}"
    try:
        if command == "convert":
            args = _convert_parser().parse_args(argv)
            result = _convert.convert(
                args.inputs,
                args.output,
                name=args.name,
                compression=args.compression,
                cluster_size=args.cluster_size,
                step_size=args.step_size,
                progress=args.progress,
            )
            if not args.quiet:
                print(_convert.describe(result))
        else:
            parser = _draw_parser()
            args = parser.parse_args(argv)
            if args.range and not args.range[0] < args.range[1]:
                parser.error(f"argument --range: LO must be less than HI, not {args.range[0]:g} {args.range[1]:g}")
            start, stop = args.entries or (None, None)
            hist = _draw.draw(
                args.source,
                args.expression,
                args.output,
                cut=args.cut,
                bins=args.bins,
                range=tuple(args.range) if args.range else None,
                entry_start=start,
                entry_stop=stop,
                title=args.title,
                logy=args.logy,
                progress=args.progress,
                verify_checksums=verify and not args.no_verify,
            )
            if args.json:
                print(json.dumps(hist.to_dict()))
            elif not args.quiet:
                print(f"wrote {args.output}: {hist.summary()}")
    except KeyboardInterrupt:
        print(f"\n{prog}: interrupted", file=sys.stderr)
        return 130
    except expected as err:
        print(f"{prog}: error: {_message(err)}", file=sys.stderr)
        return 1
    return 0


def _rust_help() -> str:
    """The Rust CLI's ``--help`` text (captured from its stdout)."""
    sys.stdout.flush()
    with tempfile.TemporaryFile() as tmp:
        saved = os.dup(1)
        try:
            os.dup2(tmp.fileno(), 1)
            _lib.cli_main([PROG, "--help"])
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        tmp.seek(0)
        return tmp.read().decode("utf-8", errors="replace")


def combined_help() -> str:
    """The Rust CLI's help with the Python subcommands inserted in its command list."""
    text = _rust_help()
    lines = text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == "Commands:")
    except StopIteration:
        extra = "\n".join(f"  {n}  {d}" for n, d in PYTHON_COMMANDS.items())
        return text.rstrip("\n") + "\n\nMore commands:\n" + extra + "\n"
    entries: list[tuple[str, str]] = []
    end = start + 1
    while end < len(lines) and lines[end].startswith("  "):
        m = re.match(r"^  (\S+)\s+(.*)$", lines[end])
        entries.append((m.group(1), m.group(2)) if m else ("", lines[end].strip()))
        end += 1
    # ours replace the Rust CLI's placeholders of the same name, else go before "help"
    missing = dict(PYTHON_COMMANDS)
    entries = [(n, missing.pop(n, d)) for n, d in entries]
    at = len(entries) - 1 if entries and entries[-1][0] == "help" else len(entries)
    entries[at:at] = list(missing.items())
    width = max(len(n) for n, _ in entries) + 2
    listed = [f"  {n.ljust(width)}{d}" if n else f"  {' ' * width}{d}" for n, d in entries]
    return "\n".join(lines[: start + 1] + listed + lines[end:]) + "\n"


def main(argv: list[str] | None = None) -> NoReturn:
    """Runs the ``rntuple`` command with ``argv`` (default ``sys.argv``) and exits with its status."""
    args = list(sys.argv if argv is None else argv)
    if not args or os.path.basename(args[0]) in ("__main__.py", "-m", "-c"):
        args[:1] = [PROG]
    rest = args[1:]
    flags = []
    while rest and rest[0] in _GLOBAL_FLAGS:
        flags.append(rest.pop(0))
    if not rest or rest[0] in ("-h", "--help"):
        help_text = combined_help()
        if not rest:  # no subcommand: a usage error
            sys.stderr.write(help_text)
            raise SystemExit(2)
        sys.stdout.write(help_text)
        raise SystemExit(0)
    if rest[0] == "help" and len(rest) > 1 and rest[1] in PYTHON_COMMANDS:
        (_convert_parser() if rest[1] == "convert" else _draw_parser()).print_help()
        raise SystemExit(0)
    if rest[0] == "help" and len(rest) == 1:
        sys.stdout.write(combined_help())
        raise SystemExit(0)
    if rest[0] in PYTHON_COMMANDS:
        raise SystemExit(_run(rest[0], rest[1:], verify="--no-verify" not in flags))
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        status = _lib.cli_main(args)
    except KeyboardInterrupt:
        # The Rust command has cleaned up and said so; Python saw the same SIGINT.
        status = 130
    raise SystemExit(status)


if __name__ == "__main__":
    main()
