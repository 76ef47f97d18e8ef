"""DP-FTS-DE's messages: one Thompson-sampling step per party and round, and its reply."""

from __future__ import annotations

import numpy as np

from ...messages import EvaluateReply, EvaluateTask, Reply, Task, message

__all__ = ["FTSStepTask", "FTSStepReply"]


@message
class FTSStepTask(Task):
    """One round of a party in DP-FTS-DE (Algo. 2): choose and evaluate point(s), send a vector.

    Round 0 evaluates ``n_init`` uniform points of the party's assigned box (l.2); a later round
    evaluates one point, chosen by the party's own GP with probability ``p`` and otherwise by
    maximising the broadcast ``omega`` (l.4-8). Either way the party then samples a weight
    vector from the posterior over the shared features of all its observations (l.10, eq. 2).

    Everything in the task is public: the shared random features, the boxes, the party's box,
    the schedule's ``p`` and the *noised* aggregate. Nothing here says which parties were
    subsampled or what any other party sent.

    Parameters
    ----------
    search_id : int
        Names the search whose history the party extends (a party object may serve several).
    round : int
        0 for the initial points, then the BO iteration.
    seed : int
        The party's randomness this round (initial points, the coin, the samples, the arg-max).
    frequencies : ndarray of shape (M, d)
        The shared random features' frequencies ``s``.
    offsets : ndarray of shape (M,)
        Their phases ``b``.
    regions : ndarray of shape (P, d, 2)
        The sub-regions (boxes of the unit cube).
    region : int
        The party's box for its initial points.
    n_init : int
        Initial points (round 0).
    p : float, default=1.0
        Probability of following the party's own GP (1 at round 0 and for standard TS).
    omega : ndarray of shape (P, M) or None, default=None
        The previous round's broadcast; None when there is none (round 0, standard TS).
    obs_noise : float, default=1e-6
        ``lambda`` of eq. 2.
    server_branch : {"argmax", "random"}, default="argmax"
        ``"random"``: a uniform random point instead of the arg-max of ``omega`` (an ablation).
    share_scores : bool, default=True
        Whether the reply carries the evaluated points and scores (to the trusted server).
    last : bool, default=False
        The last round: the reply carries the party's best configuration.
    n_features_local, n_candidates, n_restarts : int
        The own-GP features (``M_target``) and the arg-max's random points and L-BFGS-B starts.
    """

    search_id: int
    round: int
    seed: int
    frequencies: np.ndarray
    offsets: np.ndarray
    regions: np.ndarray
    region: int
    n_init: int
    p: float = 1.0
    omega: np.ndarray | None = None
    obs_noise: float = 1e-6
    server_branch: str = "argmax"
    share_scores: bool = True
    last: bool = False
    n_features_local: int = 100
    n_candidates: int = 1000
    n_restarts: int = 20

    @property
    def cost(self) -> int:
        return int(self.n_init) if self.round == 0 else 1


@message
class FTSStepReply(Reply):
    """A party's answer to an :class:`FTSStepTask`.

    Attributes
    ----------
    omega : ndarray of shape (M,)
        The posterior sample ``omega_{n,t}``: the only thing the mechanism uses. The server clips,
        subsamples and noises it; it is never forwarded to another party.
    n_samples : int
    points : ndarray of shape (k, n_dims)
        The configurations evaluated this round (empty with ``share_scores=False``).
    best_point : ndarray of shape (n_dims,) or None
        The party's best configuration so far (in the last round only).
    evaluation : EvaluateReply or None
        With ``share_scores``: the party's result for each of ``points``, as it answers an
        :class:`~fedsearch.messages.EvaluateTask`; None otherwise (no score leaves the party).
    error : str or None
    """

    omega: np.ndarray
    n_samples: int
    points: np.ndarray
    best_point: np.ndarray | None = None
    evaluation: EvaluateReply | None = None
    error: str | None = None

    def as_evaluation(self, task=None):
        """The round's evaluations as if the party had been sent them in an :class:`EvaluateTask`;
        ``(None, None)`` when the party kept them (``share_scores=False``)."""
        if self.evaluation is None:
            return None, None
        return EvaluateTask(self.points), self.evaluation
