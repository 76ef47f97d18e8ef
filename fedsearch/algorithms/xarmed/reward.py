"""Rewards of the X-armed bandits: rescaled to [0, 1], and the DP-Fed-PNE validation round."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...strategy import Strategy
from .nodes import pull_task
from .tasks import PullReply, PullTask

__all__ = ["RewardAdapter"]


class RewardAdapter(Strategy):
    """Stands between a search CV and its bandit.

    - Passes the bandit ``(mean - low) / (high - low)`` instead of the party's node mean (and
      tells a party running PF-PNE's personal stage to rescale its scores alike), and,
      under DP, has the party clip each released mean to ``[low, high]`` and scales the noise
      by ``high - low``, so that the rescaled release is a value of ``[0, 1]`` plus exactly the
      bandit's ``sigma`` (sensitivity 1 on the rescaled scale).
    - Under DP, ends with one more round in which every party releases its score of the
      recommendation (the centre of the recommended node, pulled once, with the same noise and
      clipping; a party that released that configuration already answers with the same value):
      the recommendation is then in ``cv_results_`` and the search CV does not need its
      (noise-free) validation round, so no clean score leaves a party.

    Attributes
    ----------
    validated_ : bool
        Whether the DP validation round ran (one more release of every party).
    """

    def __init__(self, strategy, bounds, seed: int):
        self.strategy = strategy
        self.low, self.scale = float(bounds[0]), float(bounds[1] - bounds[0])
        self.clip = (self.low, float(bounds[1]))
        self.noise_std = getattr(strategy, "noise_std_", 0.0) * self.scale
        self._rng = np.random.default_rng([seed, 1])
        self._validation_round = None
        self.validated_ = False

    def _task(self, task):
        if isinstance(task, PullTask) and task.noise_std:
            return dataclasses.replace(task, noise_std=self.noise_std, clip=self.clip)
        if hasattr(task, "bounds"):  # a party that compares its own scores (PF-PNE's personal stage)
            return dataclasses.replace(task, bounds=self.clip)
        return task

    def configure(self, round):
        if self._validation_round is not None:
            return None
        tasks = self.strategy.configure(round)
        if tasks is not None:
            return {p: self._task(t) for p, t in tasks.items()}
        if not self.noise_std:
            return None
        self._validation_round = round
        node = self.strategy.recommended_node()
        if not len(node):
            node = self.strategy.partition.root()
        task = pull_task(self.strategy.partition, node, [1], self._rng, "center", share=False)
        seeds = self._rng.integers(2**63, size=self.strategy.n_parties)
        return {p: dataclasses.replace(task, noise_std=self.noise_std, noise_seed=int(seed), clip=self.clip)
                for p, seed in enumerate(seeds)}

    def aggregate(self, round, replies):
        if round == self._validation_round:
            self.validated_ = True
            return
        self.strategy.aggregate(round, {
            p: dataclasses.replace(r, means=(np.asarray(r.means) - self.low) / self.scale)
            if isinstance(r, PullReply) and r.error is None else r
            for p, r in replies.items()})

    def recommend(self, party=None):
        return self.strategy.recommend(party)
