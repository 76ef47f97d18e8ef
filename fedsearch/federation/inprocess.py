"""The in-process transport: every party runs in this process (a simulation of a federation).

The units of work of all parties in a round (configuration x CV fold) go to one flat
:class:`sklearn.utils.parallel.Parallel` call, so no party waits for another and
``joblib.parallel_config(backend="dask" | "ray")`` moves the same work to a cluster.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from joblib import effective_n_jobs
from sklearn.utils.parallel import Parallel, delayed

from ..messages import ErrorReply, SetupTask, Task
from ..party import run_unit
from ..party.base import log_error
from ..party.data import Party
from ..party.dataset import pool
from .base import Federation

__all__ = ["InProcessFederation", "PooledData"]


class InProcessFederation(Federation):
    """Runs the parties in this process; one ``Parallel`` call per round.

    Parameters
    ----------
    parties : sequence of party, default=None
        Ready parties (data parties or synthetic ones); party ``i`` of the strategy is
        ``parties[i]``. Or give ``datasets``.
    datasets : sequence of PartyData, default=None
        The parties' data; each party is built from its data and the search's
        :class:`~fedsearch.messages.SetupTask` when :meth:`setup` is called.
    n_jobs : int or None, default=None
        Workers for the flat fan-out of a round (``-1``: all cores).
    verbose : int, default=0
        Above 3, the verbosity of joblib's ``Parallel`` (minus 3); the search prints the rest.
    pre_dispatch : int or str, default="2*n_jobs"
    share_errors : bool, default=False
        Whether the parties built from ``datasets`` send their full error messages (the
        parties' own opt-in, see :class:`~fedsearch.party.data.Party`); by default a failure
        crosses as its kind and exception type, and the message stays in the party's
        ``errors_`` and log.

    Attributes
    ----------
    compute_time : float
        Seconds of party-side work, summed over units.
    """

    def __init__(self, parties: Sequence | None = None, *, datasets: Sequence | None = None, n_jobs=None,
                 verbose=0, pre_dispatch="2*n_jobs", share_errors=False):
        if (parties is None) == (datasets is None):
            raise TypeError("InProcessFederation takes either parties or datasets.")
        self.parties = None if parties is None else list(parties)
        self.datasets = None if datasets is None else list(datasets)
        super().__init__([p.party_id for p in (self.parties or self.datasets)])
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.pre_dispatch = pre_dispatch
        self.share_errors = share_errors
        self.compute_time = 0.0

    @property
    def can_pool(self) -> bool:
        return self.datasets is not None

    def _exchange(self, round: int, tasks: Mapping[int, Task]) -> dict:
        if any(isinstance(t, SetupTask) for t in tasks.values()):
            return self._setup(tasks)
        replies, plan = {}, []
        for p, task in tasks.items():
            try:
                plan.append((p, task, self.parties[p].units(task)))
            except Exception as exc:  # noqa: BLE001 - a task the party refuses is data
                replies[p] = self._failure(p, task, exc)
        flat = [u for _, _, units in plan for u in units]
        # the callbacks' leaf tasks are made here, before the work leaves for the workers
        contexts = [self.party_progress[p].child(u.task_name, max_subtasks=u.subtasks)
                    if p in self.party_progress else None for p, _, units in plan for u in units]
        if effective_n_jobs(self.n_jobs) == 1 and self.verbose <= 3:  # no dispatch overhead per unit
            outputs = [run_unit(u, c) for u, c in zip(flat, contexts)]
        else:
            outputs = Parallel(n_jobs=self.n_jobs, verbose=max(self.verbose - 3, 0), pre_dispatch=self.pre_dispatch)(
                delayed(run_unit)(u, c) for u, c in zip(flat, contexts)
            )
        self.compute_time += sum(t for _, t in outputs)
        start = 0
        for p, task, units in plan:
            outs = [o for o, _ in outputs[start:start + len(units)]]
            start += len(units)
            try:
                replies[p] = self.parties[p].reply(task, outs)
            except Exception as exc:  # noqa: BLE001
                replies[p] = self._failure(p, task, exc)
        return replies

    def _failure(self, p: int, task: Task, exc: Exception) -> ErrorReply:
        """A party that failed a task answers with a data-free error (raised, data-free, when
        it was told to raise)."""
        return self.parties[p].task_failed(task, exc)

    def _setup(self, tasks: Mapping[int, SetupTask]) -> dict:
        if self.datasets is None:
            raise TypeError("This InProcessFederation was given ready parties; there is nothing to set up.")
        self.parties, replies = [], {}
        for p, d in enumerate(self.datasets):
            try:
                party = Party.from_setup(d.party_id, d.X, d.y, tasks[p], fit_params=d.fit_params,
                                         groups=d.groups, share_errors=self.share_errors)
            except Exception as exc:  # noqa: BLE001 - a party that cannot be set up answers so
                party = None
                public = log_error(d.party_id, exc, "setup", "applying the search's set-up", self.share_errors)
                replies[p] = ErrorReply(error=public, kind="setup")
            else:
                replies[p] = party.setup_reply()
            self.parties.append(party)
        return replies

    def pool(self):
        """The union of the parties' data (``X, y, fit_params``). Every row moves: the transcript
        records one ``PooledData`` message per party with its rows and bytes."""
        if not self.can_pool:
            return super().pool()
        round_ = self.next_round
        for p, d in enumerate(self.datasets):
            self.record(round_, p, "to_server", PooledData(d.n_samples), n_bytes=_nbytes(d))
        return pool(self.datasets)


class PooledData:
    """Stands in the transcript for a party's whole dataset sent to the server (the pooled final
    fit): a data transfer, logged with its bytes, not a communication round of the search."""

    def __init__(self, n_rows: int):
        self.n_rows = n_rows

    def __repr__(self) -> str:
        return f"PooledData(n_rows={self.n_rows})"


def _nbytes(d) -> int:
    """Memory of a party's dataset (arrays, sparse matrices and pandas objects)."""
    total = 0
    for part in (d.X, d.y, *d.fit_params.values()):
        if hasattr(part, "memory_usage"):
            total += int(np.sum(part.memory_usage(deep=True)))
        elif hasattr(part, "data") and hasattr(part, "indices"):  # scipy.sparse
            total += part.data.nbytes + part.indices.nbytes + part.indptr.nbytes
        elif part is not None:
            total += np.asarray(part).nbytes
    return total
