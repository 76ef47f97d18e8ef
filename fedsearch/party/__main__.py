"""Start a party next to its data: ``python -m fedsearch.party --help``.

The party is a Flower SuperNode named by its node config; it answers the tasks of every search
that a :class:`~fedsearch.federation.flower.FlowerFederation` runs through the SuperLink, from
the data given here, which never leaves this machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import sys
from pathlib import Path

from ..federation.flower import FLOWER_ENV

#: a party's Flower environment unless set: no telemetry, and tasks picked up within 0.2 s
PARTY_ENV = {**FLOWER_ENV, "FLWR_SUPEREXEC_TASK_POLL_INTERVAL": "0.2"}

_EXAMPLES = """\
examples:
  python -m fedsearch.party --name a --data silo_a.csv --target label --superlink 127.0.0.1:9092 --insecure
  python -m fedsearch.party --name b --loader mypkg.data:load_b --superlink link.example.org:9092 \\
      --root-certificates ca.pem -- --auth-supernode-private-key keys/b

Arguments after "--" go to flower-supernode unchanged.
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m fedsearch.party", description="Start a party next to its data (a Flower SuperNode).",
        epilog=_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--name", required=True, help="the party's name: the same one the server lists")
    data = parser.add_mutually_exclusive_group(required=True)
    data.add_argument("--data", help="a CSV or parquet file of the party's data (with --target)")
    data.add_argument("--loader", help="'module:function', a callable returning X, y")
    parser.add_argument("--target", help="the label column of --data")
    parser.add_argument("--superlink", required=True, help="the SuperLink's Fleet API address, host:port")
    tls = parser.add_mutually_exclusive_group()
    tls.add_argument("--insecure", action="store_true", help="no TLS (loopback tests only)")
    tls.add_argument("--root-certificates", help="CA certificate of the SuperLink's TLS certificate")
    parser.add_argument("--share-errors", action="store_true",
                        help="send full error messages to the server (they may quote this party's data); "
                             "by default only the error's kind and type cross, the message stays in this log")
    parser.add_argument("--port", type=int, default=None,
                        help="local port of the SuperNode's Runtime API (default: a free one)")
    return parser


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def node_config(args) -> dict:
    """The SuperNode's node config for the parsed ``args``."""
    config = {"party": args.name}
    if args.loader is not None:
        config["loader"] = args.loader
    else:
        config["data"] = str(Path(args.data).resolve())
        config["target"] = args.target
    if args.share_errors:
        config["share_errors"] = "true"
    return config


def supernode_command(args, extra: list[str]) -> list[str]:
    """The ``flower-supernode`` command line of a party."""
    config = node_config(args)
    for key, value in config.items():
        if "'" in value or "\n" in value:
            raise SystemExit(f"--{key} must not contain a quote or a line break: {value!r}")
    command = ["flower-supernode", "--superlink", args.superlink,
               "--node-config", " ".join(f"{k}='{v}'" for k, v in config.items()),
               "--port", str(args.port if args.port is not None else _free_port())]
    if args.insecure:
        command.append("--insecure")
    elif args.root_certificates is not None:
        command += ["--root-certificates", args.root_certificates]
    return command + extra


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    args = _parser().parse_args(argv[:len(argv) - len(extra) - (1 if "--" in argv else 0)])
    if args.data is not None and args.target is None:
        _parser().error("--data needs --target")
    from ._flower_client import load_party_data

    X, y = load_party_data(node_config(args))  # fail here, not at the first task
    print(f"party {args.name!r}: {len(y)} samples; connecting to {args.superlink}", flush=True)
    command = supernode_command(args, extra)
    executable = shutil.which(command[0], path=os.pathsep.join([str(Path(sys.executable).parent),
                                                                 os.environ.get("PATH", "")]))
    if executable is None:
        raise SystemExit("flower-supernode is missing: pip install 'fedsearch[flower]'")
    env = {**PARTY_ENV, **os.environ}
    os.execve(executable, command, env)


if __name__ == "__main__":
    main()
