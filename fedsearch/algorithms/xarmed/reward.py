"""Rewards of the X-armed bandits: rescaled to [0, 1], and the DP-Fed-PNE validation round."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...messages import EvaluateReply, EvaluateTask
from ...strategy import Strategy

__all__ = ["RewardAdapter"]


class RewardAdapter(Strategy):
    """Stands between a search CV and its bandit.

    - Passes the bandit ``(score - low) / (high - low)`` instead of the party's score, and scales
      a DP task's noise by ``high - low`` on the party's side, so that the rescaled reward carries
      exactly the bandit's ``sigma`` (sensitivity 1 on the rescaled scale).
    - Under DP, ends with one more round in which every party evaluates the recommendation with
      the same noise: the recommendation is then in ``cv_results_`` and the search CV does not
      need its (noise-free) validation round, so no clean score leaves a party.
    """

    def __init__(self, strategy, bounds, seed: int):
        self.strategy = strategy
        self.low, self.scale = float(bounds[0]), float(bounds[1] - bounds[0])
        self.noise_std = getattr(strategy, "noise_std_", 0.0) * self.scale
        self._rng = np.random.default_rng([seed, 1])
        self._validation_round = None

    def configure(self, round):
        if self._validation_round is not None:
            return None
        tasks = self.strategy.configure(round)
        if tasks is not None:
            return {p: dataclasses.replace(t, noise_std=t.noise_std * self.scale) if t.noise_std else t
                    for p, t in tasks.items()}
        if not self.noise_std:
            return None
        self._validation_round = round
        point = self.strategy.recommend()[None, :]
        seeds = self._rng.integers(2**32, size=self.strategy.n_parties)
        return {p: EvaluateTask(point, noise_std=self.noise_std, seed=int(seed))
                for p, seed in enumerate(seeds)}

    def aggregate(self, round, replies):
        if round == self._validation_round:
            return
        self.strategy.aggregate(round, {
            p: dataclasses.replace(r, scores=(np.asarray(r.scores) - self.low) / self.scale)
            if isinstance(r, EvaluateReply) and r.error is None else r
            for p, r in replies.items()})

    def recommend(self, party=None):
        return self.strategy.recommend(party)
