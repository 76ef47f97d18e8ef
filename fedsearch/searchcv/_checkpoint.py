"""Stop and resume: the server's record of a search, written after every round.

A checkpoint is the search's fingerprint and, per finished round, the tasks sent and the
replies received, as the messages' own JSON (no pickle). Strategies are seeded and
deterministic, so a resumed search rebuilds its state by *replaying* the recorded rounds: it asks
the strategy for each round's tasks again, checks that they are the recorded ones, and feeds it
the recorded replies without asking any party. The search then goes on from the first round
not recorded and ends with exactly the results of an uninterrupted run.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..messages import decode, encode, jsonable

__all__ = ["Checkpoint"]

_FORMAT = "fedsearch-checkpoint"
_VERSION = 1


def _normalised(value):
    """``value`` as the JSON the codec would write (what can cross no wire: its type name)."""
    return json.loads(json.dumps(jsonable(value, strict=False), allow_nan=True))


class Checkpoint:
    """The rounds of one search, kept in the JSON file ``path``.

    Parameters
    ----------
    path : str or path-like
        The file; read if it exists (it must have been written by the same search), written
        anew after every round.
    fingerprint : dict
        What makes two searches the same (estimator, parameters, space, parties, seed).
    """

    def __init__(self, path, fingerprint: dict):
        self.path = Path(path)
        self.fingerprint = {key: _normalised(value) for key, value in fingerprint.items()}
        self.rounds: dict[int, tuple[dict, dict]] = {}
        if self.path.exists():
            self._read()
        #: the rounds the file held when the search started (replayed, not sent again)
        self.resumed = sorted(self.rounds)

    def _read(self) -> None:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError) as exc:
            raise ValueError(f"The 'checkpoint' file {str(self.path)!r} cannot be read as a fedsearch "
                             f"checkpoint: {exc}") from exc
        if data.get("format") != _FORMAT or data.get("version") != _VERSION:
            raise ValueError(f"The 'checkpoint' file {str(self.path)!r} is not a fedsearch checkpoint "
                             f"(version {_VERSION}).")
        if data["fingerprint"] != self.fingerprint:
            differ = sorted(k for k in set(data["fingerprint"]) | set(self.fingerprint)
                            if data["fingerprint"].get(k) != self.fingerprint.get(k))
            raise ValueError(f"The 'checkpoint' file {str(self.path)!r} was written by a different search "
                             f"(it differs in {differ}); remove it or give another path.")
        for entry in data["rounds"]:
            tasks = {int(p): decode(m.encode()) for p, m in entry["tasks"].items()}
            replies = {int(p): decode(m.encode()) for p, m in entry["replies"].items()}
            self.rounds[int(entry["round"])] = (tasks, replies)

    def save(self, round_: int, tasks: dict, replies: dict) -> None:
        """Record one finished round and rewrite the file atomically."""
        self.rounds[round_] = (tasks, replies)
        rounds = [{"round": r, "tasks": {str(p): encode(m).decode() for p, m in t.items()},
                   "replies": {str(p): encode(m).decode() for p, m in rep.items()}}
                  for r, (t, rep) in sorted(self.rounds.items())]
        data = {"format": _FORMAT, "version": _VERSION, "fingerprint": self.fingerprint, "rounds": rounds}
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(data, allow_nan=True))
        os.replace(tmp, self.path)
