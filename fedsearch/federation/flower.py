"""A transport over Flower: every party runs on its own machine, next to its data.

Each silo starts one party (``python -m fedsearch.party``, a Flower SuperNode named by its node
config); the server runs a Flower SuperLink. A search given a :class:`FlowerFederation` starts
one Flower run whose ServerApp relays each round's tasks to the parties and their replies back
to the search, which stays in this process. Only :func:`fedsearch.messages.encode`'s JSON
crosses the network: configurations, summaries and, for ``final_fit="ensemble"`` or
``"local"``, fitted models in the skops format.

See ``docs/deployment.md`` for the commands on one machine and on real hosts.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..messages import ErrorReply, Reply, Task, decode, encode
from ._flower_relay import RelayListener
from .base import Federation

__all__ = ["FlowerFederation"]

_CONNECTION = "fedsearch"
#: the wire: a message's record, and the message types of the name query and of a task
RECORD = "fedsearch"
HELLO, TASK = "fedsearch_hello", "fedsearch"
#: keeps a Flower process from posting telemetry or looking for updates or installing packages
FLOWER_ENV = {"FLWR_TELEMETRY_ENABLED": "0", "FLWR_DISABLE_UPDATE_CHECK": "1",
              "FLWR_DISABLE_RUNTIME_DEPENDENCY_INSTALLATION": "1"}

_APP_PYPROJECT = """\
[project]
name = "fedsearch-relay"
version = "1.0.0"
description = "fedsearch: a federated hyper-parameter search (code comes from the installed fedsearch)"
license = "BSD-3-Clause"
dependencies = []

[tool.flwr.app]
publisher = "fedsearch"

[tool.flwr.app.components]
serverapp = "fedsearch.federation._flower_server:server_app"
clientapp = "fedsearch.party._flower_client:client_app"

[tool.flwr.app.config]  # set for each search by `flwr run -c`, so that the app is the same for all
relay-host = "127.0.0.1"
relay-port = 0
relay-key = ""
"""


class FlowerFederation(Federation):
    """Parties on their own machines, reached through a Flower SuperLink.

    Each party runs ``python -m fedsearch.party --name NAME ...`` at its silo (a Flower
    SuperNode); this object starts a Flower run on the SuperLink at the first round of a search
    and ends it at :meth:`close` (or at the end of a ``with`` block). The search itself runs in
    this process, so this process must be able to listen on ``relay_host`` where the SuperLink's
    ServerApp can reach it (normally: run the search on the SuperLink's host).

    Parameters
    ----------
    parties : sequence of str
        The parties' names, as each silo gave them (``--name``); party ``i`` of the search is
        ``parties[i]``.
    superlink : str, default="127.0.0.1:9093"
        Address of the SuperLink's Control API (``host:port``).
    insecure : bool, default=False
        Talk to the SuperLink without TLS (loopback tests only).
    root_certificates : str or path-like, default=None
        CA certificate of the SuperLink's TLS certificate (None: the system's).
    timeout : float, default=3600.0
        Seconds to wait for a round's replies; a party that has not replied by then is reported
        failed for that round (``error_score`` decides whether the search goes on).
    connect_timeout : float, default=300.0
        Seconds to wait for the run to start and every party to be connected.
    relay_host : str, default="127.0.0.1"
        Address on which this process listens for its ServerApp.
    flwr_home : str or path-like, default=None
        Where the ``flwr`` command keeps its state for this federation (None: a temporary
        directory, removed at :meth:`close`).

    Attributes
    ----------
    run_id : int or None
        The Flower run of the current search.
    start_time : float or None
        Seconds :meth:`start` took: submitting the run, its ServerApp starting and connecting
        back, every party answering.
    round_times : dict of int to float
        Wall seconds of each round's exchange (tasks out to replies back), by round number.

    Examples
    --------
    >>> from fedsearch.federation.flower import FlowerFederation
    >>> federation = FlowerFederation(["a", "b"], superlink="127.0.0.1:9093", insecure=True)
    >>> federation.party_ids
    ['a', 'b']
    """

    def __init__(self, parties: Sequence[str], superlink: str = "127.0.0.1:9093", *, insecure: bool = False,
                 root_certificates=None, timeout: float = 3600.0, connect_timeout: float = 300.0,
                 relay_host: str = "127.0.0.1", flwr_home=None):
        self._link = self._tmp = None
        names = [str(p) for p in parties]
        if not names or len(set(names)) != len(names):
            raise ValueError(f"parties must be distinct names, at least one. Got {list(parties)!r}.")
        for value, what in ((timeout, "timeout"), (connect_timeout, "connect_timeout")):
            if not value > 0:
                raise ValueError(f"The {what!r} parameter of FlowerFederation must be a positive number of "
                                 f"seconds. Got {value!r} instead.")
        super().__init__(names)
        self.superlink = superlink
        self.insecure = insecure
        self.root_certificates = root_certificates
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.relay_host = relay_host
        self.flwr_home = flwr_home
        self.run_id = None
        self.start_time = None
        self.round_times: dict[int, float] = {}

    # ------------------------------------------------------------------ the transport
    def _exchange(self, round: int, tasks: Mapping[int, Task]) -> dict[int, Reply]:
        if self._link is None:
            self.start()
        t0 = time.perf_counter()
        by_name = {self.party_ids[p]: encode(task).decode() for p, task in tasks.items()}
        self._link.send({"op": "exchange", "round": round, "tasks": by_name, "timeout": self.timeout})
        answer = self._link.receive(timeout=self.timeout + self.connect_timeout)
        self.round_times[round] = time.perf_counter() - t0
        replies = {}
        for p in tasks:
            name = self.party_ids[p]
            got = answer["replies"][name]
            replies[p] = (decode(got["reply"]) if "reply" in got else ErrorReply(
                error=f"party {name!r} failed in round {round}: {got['failed']}", kind="transport"))
        return replies

    # ------------------------------------------------------------------ the Flower run
    def start(self) -> "FlowerFederation":
        """Start the Flower run and wait until every party is connected (done by the first
        round when not called)."""
        if self._link is not None:
            return self
        t0 = time.perf_counter()
        self._tmp = tempfile.TemporaryDirectory(prefix="fedsearch-flower-")
        tmp = Path(self._tmp.name)
        listener = RelayListener(self.relay_host, tmp / "relay.key")
        try:
            app = tmp / "app"
            app.mkdir()
            (app / "pyproject.toml").write_text(_APP_PYPROJECT)
            host, port = listener.address
            config = f"relay-host={json.dumps(host)} relay-port={port} relay-key={json.dumps(str(listener.key_file))}"
            self.run_id = self._flwr_run(app, tmp, config)
            try:
                self._link = listener.accept(timeout=self.connect_timeout)
            except TimeoutError as exc:
                raise TimeoutError(
                    f"The ServerApp of Flower run {self.run_id} did not connect back within {self.connect_timeout} s: "
                    f"is fedsearch installed in the Python of the SuperLink at {self.superlink}, and can that "
                    f"host reach {host}:{port}? The SuperLink's log tells.") from exc
        except BaseException:
            self.close()
            raise
        finally:
            listener.close()
        self._link.send({"op": "connect", "parties": self.party_ids, "timeout": self.connect_timeout})
        missing = self._link.receive(timeout=2 * self.connect_timeout)["missing"]
        if missing:
            self.close()
            raise ConnectionError(f"Parties {missing} did not connect to the SuperLink at {self.superlink} "
                                  f"within {self.connect_timeout} s.")
        self.start_time = time.perf_counter() - t0
        return self

    def _flwr_run(self, app: Path, tmp: Path, config: str) -> int:
        home = Path(self.flwr_home) if self.flwr_home is not None else tmp / "flwr-home"
        home.mkdir(parents=True, exist_ok=True)
        connection = [f'address = {json.dumps(self.superlink)}']
        if self.insecure:
            connection.append("insecure = true")
        elif self.root_certificates is not None:
            connection.append(f"root-certificates = {json.dumps(str(Path(self.root_certificates).resolve()))}")
        (home / "config.toml").write_text(f"[superlink.{_CONNECTION}]\n" + "\n".join(connection) + "\n")
        flwr = shutil.which("flwr", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
        if flwr is None:
            raise ImportError("The flwr command is missing: pip install 'fedsearch[flower]'.")
        env = {**os.environ, **FLOWER_ENV, "FLWR_HOME": str(home)}
        out = subprocess.run([flwr, "run", str(app), _CONNECTION, "--format", "json", "--run-config", config], env=env,
                             capture_output=True, text=True, timeout=self.connect_timeout)
        try:
            result = json.loads(out.stdout)
        except json.JSONDecodeError:
            result = {}
        if out.returncode != 0 or not result.get("success"):
            raise ConnectionError(f"flwr run could not start a run on the SuperLink at {self.superlink} "
                                  f"(exit code {out.returncode}): {(out.stdout + out.stderr).strip()[-2000:]}")
        return int(result["run-id"])

    def close(self) -> None:
        """End the Flower run (the parties keep running, ready for the next search)."""
        if self._link is not None:
            try:
                self._link.send({"op": "close"})
            except OSError:
                pass
            self._link.close()
            self._link = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> "FlowerFederation":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        self.close()

    def __repr__(self) -> str:
        return f"FlowerFederation({self.party_ids!r}, superlink={self.superlink!r})"
