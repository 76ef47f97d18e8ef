"""Quality measures of a federated search (FLoRA, 004_*.txt, §3)."""

from __future__ import annotations

import numpy as np

__all__ = ["relative_regret", "heterogeneity"]


def relative_regret(score, best, baseline):
    """Relative regret of a configuration's score (FLoRA §3, Tables 3-4 and 7-15).

    .. math:: \\frac{a^\\star - a}{a^\\star - b}

    where :math:`a` is the score of the configuration under test (``score``), :math:`a^\\star`
    the best score of a centralised search on the pooled data (``best``) and :math:`b` the score
    of the single-shot baseline, the default configuration (``baseline``); all higher-is-better,
    e.g. 10-fold cross-validated balanced accuracy on the pooled data. The baseline has regret 1,
    the centralised optimum 0; above 1 is worse than the baseline, below 0 better than the
    centralised search.

    Parameters
    ----------
    score, best, baseline : float or array-like
        Broadcast against each other.

    Returns
    -------
    float or ndarray
        NaN where ``best == baseline`` (no room for improvement: the ratio is undefined).

    Examples
    --------
    >>> round(relative_regret(0.90, best=0.95, baseline=0.85), 6)
    0.5
    >>> relative_regret([0.85, 0.95, 0.80], best=0.95, baseline=0.85).round(3).tolist()
    [1.0, 0.0, 1.5]
    """
    a, best, b = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (score, best, baseline)))
    gap = best - b
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(gap != 0, (best - a) / np.where(gap != 0, gap, 1.0), np.nan)
    return float(out) if out.ndim == 0 else out


def heterogeneity(best_losses):
    """The inter-party heterogeneity ``gamma_p`` of FLoRA §3 (and App. C.5).

    .. math:: \\gamma_p = \\frac{1 - \\min_{i} L^{(i)}_\\star}{1 - \\max_{i} L^{(i)}_\\star},
              \\qquad L^{(i)}_\\star = \\min_t L^{(i)}_t

    with :math:`L^{(i)}_\\star` the lowest loss (``1 - score``) party :math:`i` saw in its local
    search: the ratio of the best party's best score to the worst party's best score
    ("PMax / PMin" of Table 7). It is at least 1; near 1 the parties look alike. Meaningful for
    scores in ``[0, 1]`` such as (balanced) accuracy.

    Parameters
    ----------
    best_losses : array-like of shape (n_parties,)
        Each party's lowest observed loss; NaN entries (failed parties) are ignored.

    Returns
    -------
    float
        NaN when no party has a finite loss.

    Examples
    --------
    >>> round(heterogeneity([0.1, 0.2, 0.25]), 6)   # 0.9 / 0.75
    1.2
    """
    losses = np.asarray(best_losses, dtype=float)
    losses = losses[np.isfinite(losses)]
    if losses.size == 0:
        return float("nan")
    return float((1.0 - losses.min()) / (1.0 - losses.max()))
