"""What the X-armed-bandit search estimators share (Fed-PNE, level-order, PF-PNE).

The reward of a pull is a party's mean cross-validation score of the configuration; the bandits
assume rewards in ``[0, 1]``. Bounded scorers (accuracy, balanced accuracy, ROC AUC, F1,
precision, recall, Jaccard...) are used as they are; any other scorer needs
``reward_bounds=(low, high)``, which rescales the score to ``(score - low) / (high - low)`` on
the way to the strategy (``cv_results_`` keeps the raw scores).
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import is_classifier

from ... import _validation as v
from ..._random import draw_seed
from ...messages import EvaluateReply
from ...searchcv import BaseFederatedSearchCV, docs
from ...space import SearchSpace
from .nodes import PULLS
from .reward import RewardAdapter
from .tasks import PullReply
from .tree import SPLIT_RULES

__all__ = ["BanditSearchCV", "BOUNDED_SCORERS", "BANDIT_PARAMS", "BANDIT_ATTRIBUTES"]

#: scikit-learn scorer names whose values lie in [0, 1]
BOUNDED_SCORERS = frozenset(
    ["accuracy", "balanced_accuracy", "top_k_accuracy", "average_precision", "roc_auc", "roc_auc_ovr",
     "roc_auc_ovo", "roc_auc_ovr_weighted", "roc_auc_ovo_weighted", "rand_score", "homogeneity_score",
     "completeness_score", "v_measure_score", "normalized_mutual_info_score", "fowlkes_mallows_score"]
    + [f"{m}{s}" for m in ("f1", "precision", "recall", "jaccard")
       for s in ("", "_micro", "_macro", "_weighted", "_samples")]
)


def _is_bounds(value) -> bool:
    return (isinstance(value, (tuple, list)) and len(value) == 2
            and all(isinstance(b, numbers.Real) and not isinstance(b, bool) and np.isfinite(b) for b in value)
            and value[0] < value[1])


_BOUNDS = v.Constraint(_is_bounds, "a pair (low, high) of finite floats with low < high")


class BanditSearchCV(BaseFederatedSearchCV):
    """What the X-armed-bandit search CVs share: reward checks, rescaling, seeding."""

    _parameter_constraints = {
        **BaseFederatedSearchCV._parameter_constraints,
        "n_iter": [v.interval(numbers.Integral, 1, None, closed="left")],
        "nu1": [v.POSITIVE],
        "rho": [v.OPEN_UNIT],
        "split": [v.options(*SPLIT_RULES)],
        "pull": [v.options(*PULLS)],
        "reward_bounds": [v.NONE, _BOUNDS],
        "aggregate": [v.options("mean", "weighted")],
        "share_evaluations": [v.BOOLEAN],
    }

    def _get_space(self):
        return SearchSpace(self.param_distributions)

    def _reward_scorer(self):
        """The scoring spec of the objective metric (a name, a callable or None)."""
        names, multimetric = self._metric_names()
        if not multimetric:
            return self.scoring
        objective = self._objective(names, multimetric)
        return self.scoring[objective] if isinstance(self.scoring, dict) else objective

    def _check_search_params(self, n_parties):
        if self.reward_bounds is not None:
            return
        scorer = self._reward_scorer()
        if scorer is None and is_classifier(self.estimator):
            return  # the classifier's score is its accuracy
        if isinstance(scorer, str) and scorer in BOUNDED_SCORERS:
            return
        shown = "the estimator's score method" if scorer is None else repr(scorer)
        raise ValueError(
            f"{type(self).__name__} needs rewards in [0, 1], and the scoring {shown} is not known "
            f"to lie there. Use a bounded scorer (such as 'accuracy', 'balanced_accuracy', "
            f"'roc_auc' or 'f1') or pass reward_bounds=(low, high) to rescale the score to "
            f"(score - low) / (high - low)."
        )

    def _wrap(self, strategy, seed):
        if self.reward_bounds is None and not getattr(strategy, "noise_std_", 0):
            return strategy
        return RewardAdapter(strategy, self.reward_bounds or (0.0, 1.0), seed)

    def _seed_and_weights(self, weights, random_state):
        seed = draw_seed(random_state)
        return seed, (weights if self.aggregate == "weighted" else None)

    def _after_search(self, strategy, federation, space):
        return {"strategy_": getattr(strategy, "strategy", strategy)}

    def _check_replies(self, federation, tasks, replies):
        """Stop the search when a noise-free score lies outside ``reward_bounds``: the bandit
        would get rewards outside [0, 1] (an MSE of 3158 with bounds (-1, 0) is not a reward)."""
        if self.reward_bounds is None:
            return
        low, high = self.reward_bounds
        for p, reply in replies.items():
            if getattr(reply, "error", None) is not None or getattr(tasks[p], "noise_std", 0):
                continue  # a DP release may leave the bounds by its noise
            if isinstance(reply, PullReply):  # each configuration's score when shared, else the node means
                scores = reply.means if reply.evaluation is None else reply.evaluation.scores
            elif hasattr(reply, "as_evaluation"):  # a party's own evaluations, when it shares them
                scores = getattr(reply.as_evaluation(tasks[p])[1], "scores", [])
            elif isinstance(reply, EvaluateReply):
                scores = reply.scores
            else:
                continue
            scores = np.asarray(scores, dtype=float)
            outside = np.isfinite(scores) & ((scores < low) | (scores > high))
            if outside.any():
                raise ValueError(
                    f"The 'reward_bounds' parameter of {type(self).__name__} must contain the scores it "
                    f"rescales: party {federation.party_ids[p]!r} scored {scores[outside][0]:.6g}. Got "
                    f"{tuple(self.reward_bounds)!r} instead."
                )


BANDIT_ATTRIBUTES = docs.entries("""    strategy_ : Strategy
        The server-side state machine after the search (its phases or levels, failures and
        partition), for inspection.
""")

BANDIT_PARAMS = docs.entries("""    reward_bounds : tuple (low, high) or None, default=None
        Range of the objective score, rescaled to ``(score - low) / (high - low)`` for the
        bandit (which assumes rewards in ``[0, 1]``). Needed for scorers not known to be
        bounded (``r2``, ``neg_*``, callables); ``fit`` raises before any work without it.
    share_evaluations : bool, default=True
        Whether each party also sends its score of every configuration it cross-validated
        inside the nodes, so that ``cv_results_`` lists them all. False is the papers' protocol:
        one mean per node and party crosses the boundary, and ``cv_results_`` holds only the
        recommendation's validation.
    aggregate : {"mean", "weighted"}, default="mean"
        The global objective: the plain mean of the parties' scores (the paper's
        ``f = (1/M) sum_m f_m``) or their mean weighted by party size; it is both what the
        bandit optimises and the ``mean_test_<metric>`` of ``cv_results_``.
""")
