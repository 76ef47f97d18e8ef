"""The transport seam: send one round's tasks, gather the replies, keep the transcript.

:class:`InProcessFederation` runs every party in this process. The units of work of all parties
in a round (configuration x CV fold) go to one flat :class:`sklearn.utils.parallel.Parallel` call,
so no party waits for another and ``joblib.parallel_config(backend="dask" | "ray")`` moves the
same work to a cluster.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from sklearn.utils.parallel import Parallel, delayed

from .messages import Reply, Task, encode
from .party import run_unit

__all__ = ["InProcessFederation"]


class InProcessFederation:
    """Runs the parties in this process; one ``Parallel`` call per round.

    Parameters
    ----------
    parties : sequence of Party
        Party ``i`` of the strategy is ``parties[i]``.
    n_jobs : int or None, default=None
        Workers for the flat fan-out of a round (``-1``: all cores).
    verbose : int, default=0
        Verbosity of the ``Parallel`` call and of the per-round summary.
    pre_dispatch : int or str, default="2*n_jobs"

    Attributes
    ----------
    transcript : list of tuple
        Every message as ``(round, party_id, direction, message)``, ``direction`` being
        ``"to_party"`` or ``"to_server"``: the complete record of what crossed the boundary.
    """

    def __init__(self, parties: Sequence, n_jobs=None, verbose=0, pre_dispatch="2*n_jobs"):
        self.parties = list(parties)
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.pre_dispatch = pre_dispatch
        self.transcript: list[tuple] = []
        self._log: list[dict] = []
        self.compute_time = 0.0

    def run_round(self, round: int, tasks: Mapping[int, Task]) -> dict[int, Reply]:
        """Send ``tasks`` ({party index: task}), run all their work, return {party index: reply}."""
        t0 = time.perf_counter()
        plan = []
        sizes: dict[int, int] = {}  # one encoding of a task object sent to several parties
        for p, task in tasks.items():
            self._record(round, p, "to_party", task, sizes)
            plan.append((p, task, self.parties[p].units(task)))
        flat = [u for _, _, units in plan for u in units]
        outputs = Parallel(n_jobs=self.n_jobs, verbose=self.verbose, pre_dispatch=self.pre_dispatch)(
            delayed(run_unit)(u) for u in flat
        )
        self.compute_time += sum(t for _, t in outputs)
        replies, start = {}, 0
        for p, task, units in plan:
            outs = [o for o, _ in outputs[start:start + len(units)]]
            start += len(units)
            replies[p] = self.parties[p].reply(task, outs)
            self._record(round, p, "to_server", replies[p])
        if self.verbose:
            print(f"[fedsearch] round {round}: {len(tasks)} parties, {len(flat)} fits, "
                  f"{time.perf_counter() - t0:.2f}s")
        return replies

    def _record(self, round: int, p: int, direction: str, message, sizes=None) -> None:
        party_id = self.parties[p].party_id
        self.transcript.append((round, party_id, direction, message))
        sizes = {} if sizes is None else sizes
        if id(message) not in sizes:
            sizes[id(message)] = len(encode(message))
        self._log.append({"round": round, "party": party_id, "direction": direction,
                          "message": type(message).__name__, "bytes": sizes[id(message)]})

    def log(self) -> dict[str, list]:
        """The transcript's metadata as columns (round, party, direction, message, bytes)."""
        keys = ("round", "party", "direction", "message", "bytes")
        return {k: [row[k] for row in self._log] for k in keys}

    @property
    def n_rounds(self) -> int:
        return len({row["round"] for row in self._log})
