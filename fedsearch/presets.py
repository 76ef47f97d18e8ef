"""The search spaces and single-shot baselines of FLoRA's experiments (004_*.txt, App. D.2).

>>> from fedsearch import presets
>>> estimator, space, default = presets.get("hgb")
>>> space.param_names
['max_iter', 'learning_rate', 'min_samples_leaf', 'l2_regularization']
>>> default
{'max_iter': 100, 'learning_rate': 0.1, 'min_samples_leaf': 20, 'l2_regularization': 0.0}

``default`` is the single-shot baseline (the configuration every relative regret is measured
against); it is a parameter dict for ``estimator.set_params``, not necessarily a point of
``space``: HGB's ``l2_regularization=0`` lies outside the log-scaled range ``[1e-4, 1]``.

``get(name, scaled="minmax")`` puts a ``MinMaxScaler`` in front (a Pipeline; the space and the
default get the step's prefix, e.g. ``svc__C``): each party then scales its own data inside
every fit, which the RBF kernel and the MLP need on features of unequal scales. The paper's SVC
and MLP ran on min-max scaled data (scaled once over the whole dataset, before any split: the
protocol facts of its published runs, ``flora_paper_runs/README.md``); ``scaled=True`` (or
``"standard"``) standardises instead. The SVC preset weighs the classes as the paper's code did
(``class_weight="balanced"``), and the MLP preset fixes the paper's ``random_state=5489``.
"""

from __future__ import annotations

from typing import NamedTuple

from sklearn.base import BaseEstimator
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler, StandardScaler

from . import _validation as v
from ._validation import check_value
from .space import SearchSpace

__all__ = ["Preset", "get", "names"]


class Preset(NamedTuple):
    """An estimator, the paper's search space for it and its single-shot default configuration."""

    estimator: BaseEstimator
    space: SearchSpace
    default: dict


def _hgb() -> tuple:
    from sklearn.ensemble import HistGradientBoostingClassifier

    # App. D.2.1
    api_config = {
        "max_iter": {"type": "int", "space": "linear", "range": (10, 200)},
        "learning_rate": {"type": "real", "space": "log", "range": (1e-3, 1.0)},
        "min_samples_leaf": {"type": "int", "space": "linear", "range": (1, 40)},
        "l2_regularization": {"type": "real", "space": "log", "range": (1e-4, 1.0)},
    }
    # The paper prints "12_regularization": 0, a typo of l2_regularization (scikit-learn's
    # default). 0 is outside the log range of the space, which is fine: the baseline is only
    # ever used through set_params, never mapped to the unit cube.
    default = {"max_iter": 100, "learning_rate": 0.1, "min_samples_leaf": 20, "l2_regularization": 0.0}
    return HistGradientBoostingClassifier(), api_config, default


def _svc() -> tuple:
    from sklearn.svm import SVC

    # App. D.2.2; the baseline is Auto-sklearn's default
    api_config = {
        "C": {"type": "real", "space": "log", "range": (0.01, 1000.0)},
        "gamma": {"type": "real", "space": "log", "range": (1e-5, 10.0)},
        "tol": {"type": "real", "space": "log", "range": (1e-5, 1e-1)},
    }
    default = {"C": 1.0, "gamma": 0.1, "tol": 1e-3}
    # the paper's code: SVC(kernel="rbf", class_weight="balanced") (flora_paper_runs/README.md)
    return SVC(kernel="rbf", class_weight="balanced"), api_config, default


def _mlp() -> tuple:
    from sklearn.neural_network import MLPClassifier

    # App. D.2.3: searched parameters, and the remaining ones fixed at Auto-sklearn's values
    api_config = {
        "hidden_layer_sizes": {"type": "int", "space": "linear", "range": (50, 200)},
        "alpha": {"type": "real", "space": "log", "range": (1e-5, 1e1)},
        "learning_rate_init": {"type": "real", "space": "log", "range": (1e-5, 1e-1)},
    }
    default = {"hidden_layer_sizes": 100, "alpha": 1e-4, "learning_rate_init": 1e-3}
    estimator = MLPClassifier(
        solver="adam", activation="relu", early_stopping=True, shuffle=True, batch_size="auto",
        tol=1e-4, validation_fraction=0.1, beta_1=0.9, beta_2=0.999, epsilon=1e-8,
        random_state=5489,  # the paper's code (flora_paper_runs/README.md)
    )
    return estimator, api_config, default


_PRESETS = {"hgb": _hgb, "svc": _svc, "mlp": _mlp}


def names() -> list[str]:
    """The preset names: ``"hgb"``, ``"mlp"``, ``"svc"``."""
    return sorted(_PRESETS)


_SCALERS = {"minmax": MinMaxScaler, "standard": StandardScaler}


def get(name: str, *, scaled=False) -> Preset:
    """A fresh preset: ``(estimator, space, default)`` for ``"hgb"``, ``"svc"`` or ``"mlp"``.

    Parameters
    ----------
    name : {"hgb", "svc", "mlp"}
        HistGradientBoostingClassifier, SVC with the RBF kernel, or MLPClassifier (adam).
    scaled : bool or {"minmax", "standard"}, default=False
        Put a scaler in front: ``"minmax"`` a ``MinMaxScaler`` (the paper's scaling of SVC and
        MLP data), ``"standard"`` or True a ``StandardScaler``. The estimator is then a Pipeline,
        and the names of the space and of the default carry the model step's prefix
        (``"svc__C"``).

    Returns
    -------
    Preset
        A named tuple ``(estimator, space, default)``; the estimator is unfitted, and a new
        object on every call.

    Examples
    --------
    >>> from fedsearch import presets
    >>> estimator, space, default = presets.get("svc")
    >>> estimator.kernel, estimator.class_weight, default["C"], space.n_dims
    ('rbf', 'balanced', 1.0, 3)
    >>> estimator, space, default = presets.get("svc", scaled="minmax")
    >>> list(estimator.named_steps), space.param_names, default["svc__C"]
    (['minmaxscaler', 'svc'], ['svc__C', 'svc__gamma', 'svc__tol'], 1.0)
    """
    if name not in _PRESETS:
        raise ValueError(f"Unknown preset {name!r}; choose one of {names()}.")
    check_value("presets.get", "scaled", scaled, v.BOOLEAN, v.options(*_SCALERS))
    estimator, api_config, default = _PRESETS[name]()
    if scaled:
        estimator = make_pipeline(_SCALERS["standard" if scaled is True else scaled](), estimator)
        prefix = f"{estimator.steps[-1][0]}__"
        api_config = {prefix + k: v for k, v in api_config.items()}
        default = {prefix + k: v for k, v in default.items()}
    return Preset(estimator, SearchSpace.from_api_config(api_config), default)
