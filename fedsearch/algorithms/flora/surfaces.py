"""FLoRA's loss surfaces (004_*.txt, §2.2, Table 2 and App. B) and their arg-min.

From the parties' uploaded pairs ``E_i = {(theta_t, L_t)}`` (unit-cube points, losses
``1 - score``), one fit gives four surfaces over the whole cube:

=========  ========================================  ==========================================
``sgm``    ``f(u)``                                  one regressor ``f`` on the union of the E_i
``sgm+u``  ``f(u) + alpha * s(u)``                   ``s``: std of the forest's trees (or GP std)
``aplm``   ``1/p sum_i f_i(u)``                      ``f_i`` fitted on party i's pairs only
``mplm``   ``max_i f_i(u)``                          idem
=========  ========================================  ==========================================

APLM and MPLM are built from *per-party* regressors, as the paper defines them (a public copy of
the paper's code fits them on the global regressor by mistake). Modelling happens on unit-cube
coordinates, so log-scaled parameters are modelled on their log scale.
"""

from __future__ import annotations

import inspect

import numpy as np
from sklearn.base import clone
from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor

from ...space import SearchSpace

__all__ = ["SURFACES", "LossSurfaces", "supports_uncertainty"]

SURFACES = ("sgm", "sgm+u", "aplm", "mplm")


def supports_uncertainty(regressor) -> bool:
    """Whether ``regressor`` gives the uncertainty ``sgm+u`` needs: a forest (std over its trees)
    or a ``predict`` that takes ``return_std`` (e.g. a Gaussian process)."""
    return _uncertainty_method(regressor) is not None


def _tree_predictions(forest, U) -> np.ndarray:
    """Every tree's prediction at ``U``, shape (n_trees, n): what the forest's own ``predict``
    averages, with the input converted to the trees' float32 once instead of once per tree (the
    per-tree check is most of the cost on a few thousand points)."""
    U = np.ascontiguousarray(U, dtype=np.float32)
    return np.array([tree.predict(U, check_input=False) for tree in forest.estimators_])


def _uncertainty_method(regressor):
    if isinstance(regressor, (RandomForestRegressor, ExtraTreesRegressor)):
        return "trees"
    if "return_std" in inspect.signature(regressor.predict).parameters:
        return "return_std"
    return None


class LossSurfaces:
    """The four FLoRA loss surfaces fitted on per-party (point, loss) pairs, and their arg-min.

    Parameters
    ----------
    regressor : regressor or None, default=None
        Model of the loss; ``None`` means ``RandomForestRegressor(n_estimators=100)`` as in the
        paper. Cloned for the global model and for each party. ``sgm+u`` needs a forest
        (``RandomForestRegressor`` / ``ExtraTreesRegressor``: std over its trees) or a regressor
        whose ``predict`` takes ``return_std`` (e.g. a Gaussian process); otherwise that
        surface is unavailable (:attr:`surfaces_`).
    alpha : float, default=1.0
        Weight of the uncertainty in ``sgm+u`` (1 in the paper).
    random_state : int, Generator or None, default=None
        Seeds the regressors (when they take a ``random_state`` left at None) and the arg-min.

    Attributes
    ----------
    global_ : regressor
        ``f``, fitted on the union of all pairs.
    local_ : list of regressor
        ``f_i``, one per party that uploaded at least one pair.
    parties_ : list of int
        The index (in the list given to :meth:`fit`) of the party behind each of ``local_``.
    surfaces_ : tuple of str
        The surfaces this regressor supports.

    Notes
    -----
    A failed evaluation (NaN loss) is not dropped: it is modelled as the worst loss that party
    observed, so that every surface steers away from configurations that fail somewhere.

    Examples
    --------
    >>> import numpy as np
    >>> pairs = [(np.array([[0.1], [0.5], [0.9]]), np.array([0.1, 0.3, 0.5])),
    ...          (np.array([[0.2], [0.6], [0.8]]), np.array([0.2, 0.2, 0.6]))]
    >>> surfaces = LossSurfaces(random_state=0).fit(pairs)
    >>> values = surfaces.predict(np.array([[0.1], [0.9]]))
    >>> bool(np.all(values["mplm"] >= values["aplm"]))
    True
    """

    def __init__(self, regressor=None, alpha=1.0, random_state=None):
        self.regressor = regressor
        self.alpha = alpha
        self.random_state = random_state

    # ------------------------------------------------------------------ fitting
    def fit(self, pairs):
        """Fit the global and the per-party regressors.

        Parameters
        ----------
        pairs : list of (ndarray of shape (n_i, n_dims), ndarray of shape (n_i,))
            Each party's points of the unit cube and losses (lower is better, NaN = failed).
            A party with no finite loss is left out (it has nothing to model).

        Returns
        -------
        self
        """
        rng = np.random.default_rng(self.random_state)
        base = RandomForestRegressor(n_estimators=100) if self.regressor is None else self.regressor
        seed, self._argmin_seed = (int(s) for s in rng.integers(2**31, size=2))
        if "random_state" in base.get_params() and base.get_params()["random_state"] is None:
            base = clone(base).set_params(random_state=seed)

        Xs, ys, self.parties_ = [], [], []
        for i, (points, losses) in enumerate(pairs):
            points = np.atleast_2d(np.asarray(points, dtype=float))
            losses = np.asarray(losses, dtype=float).ravel()
            if points.shape[0] != losses.shape[0]:
                raise ValueError(f"Party {i}: {points.shape[0]} points but {losses.shape[0]} losses.")
            if not np.any(np.isfinite(losses)):
                continue
            Xs.append(points)
            ys.append(np.where(np.isfinite(losses), losses, np.nanmax(losses)))
            self.parties_.append(i)
        if not Xs:
            raise ValueError("No party uploaded a finite loss: there is no loss surface to fit.")

        self.n_dims_ = Xs[0].shape[1]
        self.points_ = np.vstack(Xs)
        # SGM / SGM+U: one model on the union E = U_i E_i (§2.2);
        # APLM / MPLM: one model per party on its own E_i (§2.2, App. B)
        self.global_ = clone(base).fit(self.points_, np.concatenate(ys))
        self.local_ = [clone(base).fit(X, y) for X, y in zip(Xs, ys)]
        self._std = _uncertainty_method(self.global_)
        self.surfaces_ = SURFACES if self._std is not None else tuple(s for s in SURFACES if s != "sgm+u")
        return self

    def _global_mean_std(self, U):
        if self._std == "trees":  # the forest's mean and the spread of its trees (App. B)
            per_tree = _tree_predictions(self.global_, U)
            return per_tree.mean(axis=0), per_tree.std(axis=0)
        if self._std == "return_std":
            return self.global_.predict(U, return_std=True)
        return self.global_.predict(U), None

    # ------------------------------------------------------------------ prediction
    def predict(self, U, surfaces=None) -> dict:
        """The value of each surface at the points ``U`` (shape (n, n_dims)).

        Returns
        -------
        dict of str to ndarray of shape (n,)
            For every name of ``surfaces`` (default: all of :attr:`surfaces_`).
        """
        U = np.atleast_2d(np.asarray(U, dtype=float))
        surfaces = self.surfaces_ if surfaces is None else tuple(surfaces)
        for s in surfaces:
            if s not in self.surfaces_:
                raise ValueError(f"Surface {s!r} is not available; available: {list(self.surfaces_)}.")
        out = {}
        if "sgm" in surfaces or "sgm+u" in surfaces:
            mean, std = self._global_mean_std(U)
            if "sgm" in surfaces:
                out["sgm"] = mean
            if "sgm+u" in surfaces:
                out["sgm+u"] = mean + self.alpha * std
        if "aplm" in surfaces or "mplm" in surfaces:
            local = np.array([_tree_predictions(f, U).mean(axis=0) if self._std == "trees" else f.predict(U)
                              for f in self.local_])  # a forest's mean, summed tree by tree as its predict does
            if "aplm" in surfaces:
                out["aplm"] = local.mean(axis=0)
            if "mplm" in surfaces:
                out["mplm"] = local.max(axis=0)
        return out

    # ------------------------------------------------------------------ arg-min (Algorithm 1, line 7)
    def minimize(self, space: SearchSpace | None = None, surfaces=None, n_candidates=2000,
                 n_starts=5, steps=(0.1, 0.03, 0.01), n_perturbations=30) -> dict:
        """The arg-min of each surface over the whole unit cube (eq. 2.7).

        The optimiser: ``n_candidates`` uniform points of the cube together with every uploaded
        point are scored; the ``n_starts`` best of them are refined by greedy local search
        (``n_perturbations`` Gaussian perturbations per step size of ``steps``, keeping any
        improvement). With a ``space``, every candidate is first snapped to a valid
        configuration (:meth:`SearchSpace.canonical`), so integer and categorical parameters
        come out valid and the surface is scored where the configuration really is.

        Forests are piecewise constant, so a surface is often minimal on a whole region; MPLM
        is, wherever one party's model is flat (a party at chance level everywhere). Ties are
        broken by the APLM value (the parties' mean predicted loss), then in favour of the
        uploaded points, then of the earliest candidate.

        Returns
        -------
        dict of str to ndarray of shape (n_dims,)
            The recommended point of each surface.
        """
        surfaces = self.surfaces_ if surfaces is None else tuple(surfaces)
        rng = np.random.default_rng(self._argmin_seed)  # same answer on every call
        if space is not None and space.discrete.any():
            snap = space.canonical  # vectorised over the candidates
        else:  # continuous coordinates are their own canonical point
            snap = lambda U: U  # noqa: E731
        d = self.n_dims_
        cand = np.vstack([self.points_, snap(rng.random((n_candidates, d)))])
        values = self.predict(cand, {*surfaces, "aplm"})
        # the perturbations, drawn surface by surface and step by step (they do not depend on
        # the surface values), so that every surface's search moves in lock-step below
        noise = {s: [rng.normal(0.0, step, (n_starts, n_perturbations, d)) for step in steps]
                 for s in surfaces}
        starts, keys = {}, {}
        for s in surfaces:
            order = np.lexsort((values["aplm"], values[s]))[:n_starts]  # stable: earliest first
            starts[s] = cand[order]
            keys[s] = np.column_stack([values[s][order], values["aplm"][order]])
        for i in range(len(steps)):  # all starts of all surfaces move together: one prediction per step
            moves = {s: snap(np.clip(starts[s][:, None, :] + noise[s][i][:len(starts[s])], 0, 1).reshape(-1, d))
                     .reshape(len(starts[s]), n_perturbations, d) for s in surfaces}
            v_all = self.predict(np.vstack([m.reshape(-1, d) for m in moves.values()]), {*surfaces, "aplm"})
            offset = 0
            for s in surfaces:
                k, rows = len(starts[s]), np.arange(len(starts[s]))
                block = slice(offset, offset + k * n_perturbations)
                offset += k * n_perturbations
                v, a = v_all[s][block].reshape(k, -1), v_all["aplm"][block].reshape(k, -1)
                j = np.array([np.lexsort((a[r], v[r]))[0] for r in rows])
                better = (v[rows, j] < keys[s][:, 0]) | ((v[rows, j] == keys[s][:, 0]) & (a[rows, j] < keys[s][:, 1]))
                starts[s][better] = moves[s][rows, j][better]
                keys[s][better] = np.column_stack([v[rows, j], a[rows, j]])[better]
        return {s: starts[s][np.lexsort((keys[s][:, 1], keys[s][:, 0]))[0]].copy() for s in surfaces}
