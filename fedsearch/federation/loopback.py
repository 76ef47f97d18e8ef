"""A Flower deployment on this machine's loopback: a SuperLink and one party per silo, each a
real process on 127.0.0.1 with ports chosen free. For trying the Flower transport out, for tests
and for benchmarks; on real hosts each silo runs ``python -m fedsearch.party`` itself.

Every process is started in its own process group and stopped by its id (with the Flower
processes it started), also when a test fails: use it as a context manager.
"""

from __future__ import annotations

import os
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from .flower import FLOWER_ENV

__all__ = ["LoopbackDeployment"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LoopbackDeployment:
    """A SuperLink and parties on 127.0.0.1 (without TLS unless given certificates).

    Parameters
    ----------
    workdir : path-like
        Where the processes keep their Flower state (``FLWR_HOME``) and logs (``<name>.log``).
    env : dict, default=None
        Extra environment of every process (e.g. ``PYTHONPATH``).
    startup_timeout : float, default=120.0
        Seconds to wait for the SuperLink to answer.

    Attributes
    ----------
    superlink : str
        ``host:port`` of the SuperLink (Fleet and Control API), once started.
    root_certificates : str or None
        The CA file of the SuperLink's TLS certificate (None: no TLS).
    pids : dict
        The id of every running process started here, by name (``"superlink"``, party names).

    Examples
    --------
    .. code-block:: python

        with LoopbackDeployment("flower-work") as deployment:
            deployment.start_superlink()
            deployment.start_party("a", data="a.csv", target="label")
            deployment.start_party("b", data="b.csv", target="label")
            with FlowerFederation(["a", "b"], deployment.superlink, insecure=True) as federation:
                search.fit(federation=federation)
    """

    def __init__(self, workdir, *, env=None, startup_timeout: float = 120.0):
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.env = dict(env or {})
        self.startup_timeout = startup_timeout
        self.superlink = None
        self.root_certificates = None
        self._procs: dict[str, subprocess.Popen] = {}

    @property
    def pids(self) -> dict[str, int]:
        return {name: p.pid for name, p in self._procs.items() if p.poll() is None}

    def _spawn(self, name: str, command: list[str]) -> subprocess.Popen:
        if name in self._procs:
            raise ValueError(f"A process named {name!r} is already running.")
        home = self.workdir / f"home-{name}"
        home.mkdir(exist_ok=True)
        env = {**os.environ, **FLOWER_ENV, "FLWR_SUPEREXEC_TASK_POLL_INTERVAL": "0.2", **self.env,
               "FLWR_HOME": str(home)}
        with open(self.workdir / f"{name}.log", "ab") as log:
            proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env=env, start_new_session=True)
        self._procs[name] = proc
        return proc

    def start_superlink(self, *, certificates=None) -> str:
        """Start the SuperLink and wait until it answers; return its address.

        ``certificates``: ``(ca, certificate, key)`` PEM files for TLS (a certificate valid for
        127.0.0.1); the parties then get the CA as their root certificate. None: no TLS."""
        port = _free_port()
        self.root_certificates = None if certificates is None else str(certificates[0])
        if certificates is None:
            security = ["--insecure"]
        else:
            ca, cert, key = map(str, certificates)
            security = ["--ssl-ca-certfile", ca, "--ssl-certfile", cert, "--ssl-keyfile", key]
        proc = self._spawn("superlink", [_script("flower-superlink"), *security, "--host", "127.0.0.1",
                                         "--port", str(port)])
        context = ssl.create_default_context(cafile=self.root_certificates) if certificates is not None else None
        scheme = "http" if certificates is None else "https"
        deadline = time.monotonic() + self.startup_timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"The SuperLink exited with code {proc.returncode}; see "
                                   f"{self.workdir / 'superlink.log'}.")
            try:
                urllib.request.urlopen(f"{scheme}://127.0.0.1:{port}/health", timeout=2, context=context).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    self.stop("superlink")
                    raise TimeoutError(f"The SuperLink did not answer within {self.startup_timeout} s.") from None
                time.sleep(0.2)
        self.superlink = f"127.0.0.1:{port}"
        return self.superlink

    def start_party(self, name: str, *, data=None, target=None, loader=None) -> int:
        """Start party ``name`` with ``python -m fedsearch.party`` (data: a CSV/parquet file and
        its label column, or a ``"module:function"`` loader); return its process id."""
        if self.superlink is None:
            raise RuntimeError("Start the SuperLink first.")
        source = ["--loader", loader] if loader is not None else ["--data", str(data), "--target", target]
        security = ["--insecure"] if self.root_certificates is None else ["--root-certificates", self.root_certificates]
        return self._spawn(name, [sys.executable, "-m", "fedsearch.party", "--name", name, *source,
                                  "--superlink", self.superlink, *security]).pid

    def kill(self, name: str) -> None:
        """Kill process ``name`` at once (SIGKILL, as a crashed machine), with its children."""
        self._signal(name, signal.SIGKILL)

    def stop(self, *names: str) -> None:
        """Stop the named processes (all when none is named), parties first: SIGTERM, then
        SIGKILL for what is still running 15 s later."""
        for name in names or [n for n in self._procs if n != "superlink"] + ["superlink"]:
            if name in self._procs:
                self._signal(name, signal.SIGTERM, grace=15.0)

    def _signal(self, name: str, sig: int, grace: float = 10.0) -> None:
        proc = self._procs.pop(name)
        for s in (sig, signal.SIGKILL):
            try:
                os.killpg(proc.pid, s)  # the group of the process we started: it and its children
            except ProcessLookupError:
                break
            try:
                proc.wait(grace)
            except subprocess.TimeoutExpired:
                continue
            try:  # the leader has gone; its children go with the group
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            break

    def __enter__(self) -> "LoopbackDeployment":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def _script(name: str) -> str:
    path = Path(sys.executable).parent / name
    return str(path) if path.exists() else name
