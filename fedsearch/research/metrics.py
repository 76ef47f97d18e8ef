"""Quality measures of a federated search (FLoRA, 004_*.txt, §3)."""

from __future__ import annotations

import numpy as np

from ..algorithms.flora.strategy import heterogeneity

__all__ = ["relative_regret", "heterogeneity", "compare_to_baseline"]


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


def compare_to_baseline(regrets, *, tol=1e-9) -> dict:
    """Summarise relative regrets across datasets against the baseline, as FLoRA's Table 3.

    The baseline (the default configuration) has regret 1. For one method's regrets, one per
    dataset (e.g. the mean over seeds), returns:

    - ``q1``, ``median``, ``q3``: the inter-quartile range of the regrets;
    - ``wins``, ``ties``, ``losses``: datasets with regret below, at (within ``tol``) and above 1;
    - ``statistic``, ``pvalue``: the one-sided Wilcoxon signed-rank test of the improvements
      ``1 - regret`` (null: the median improvement is not positive; alternative: the method
      beats the baseline). The statistic is the sum of the ranks of the positive improvements;
      the p-value is the normal approximation without continuity correction, which is how the
      paper's values come out: 7 wins of 7 give ``(28, 0.00898)``. Ties are dropped (Wilcoxon's
      zero method); with no non-tied dataset both are NaN.

    Parameters
    ----------
    regrets : array-like of shape (n_datasets,)
        NaN entries (datasets where the best and the baseline coincide) are left out.
    tol : float, default=1e-9
        How close to 1 a regret counts as a tie.

    Returns
    -------
    dict
        ``n``, ``q1``, ``median``, ``q3``, ``wins``, ``ties``, ``losses``, ``statistic``, ``pvalue``.

    Examples
    --------
    >>> out = compare_to_baseline([0.1, 0.2, 0.3, 0.4, 0.5, 0.9, 1.2])
    >>> out["wins"], out["ties"], out["losses"], out["statistic"], round(out["pvalue"], 5)
    (6, 0, 1, 26.0, 0.02126)
    """
    from scipy.stats import wilcoxon

    r = np.asarray(regrets, dtype=float).ravel()
    r = r[np.isfinite(r)]
    gain = 1.0 - r
    gain[np.abs(gain) <= tol] = 0.0
    out = {"n": int(r.size), "wins": int((gain > 0).sum()), "ties": int((gain == 0).sum()),
           "losses": int((gain < 0).sum())}
    q = np.quantile(r, [0.25, 0.5, 0.75]) if r.size else [np.nan] * 3
    out.update(q1=float(q[0]), median=float(q[1]), q3=float(q[2]))
    if out["wins"] + out["losses"] == 0:
        out.update(statistic=float("nan"), pvalue=float("nan"))
    else:  # 004_*.txt, §3 "Comparison to single-shot baseline" and Table 3
        test = wilcoxon(gain, alternative="greater", zero_method="wilcox", method="asymptotic")
        out.update(statistic=float(test.statistic), pvalue=float(test.pvalue))
    return out
