"""``python -m benchmarks <suite> [options]``: run one benchmark suite."""

from __future__ import annotations

import argparse
import importlib
import sys
import time

from . import SUITES
from ._common import add_common_arguments

USAGE = "python -m benchmarks {" + ",".join(SUITES) + "} [options]   (--help after a suite lists its options)"


def main(argv=None) -> int:
    """Run the suite named by ``argv[0]``; returns the exit status (1 if it is not available)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in SUITES:
        print(f"usage: {USAGE}")
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    suite, rest = argv[0], argv[1:]
    module = importlib.import_module(f"{__package__}.{suite}")
    parser = argparse.ArgumentParser(prog=f"python -m benchmarks {suite}",
                                     description=(module.__doc__ or "").strip().split("\n")[0])
    add_common_arguments(parser)
    module.add_arguments(parser)
    args = parser.parse_args(rest)
    args.suite = suite
    args.command = " ".join(["python -m benchmarks", *argv])
    t0 = time.perf_counter()
    module.run(args)
    print(f"\n{suite}: done in {time.perf_counter() - t0:.1f} s ({args.command})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
