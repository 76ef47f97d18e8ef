"""DP-FTS-DE: differentially private federated Thompson sampling with distributed exploration.

Dai, Low and Jaillet, NeurIPS 2021 (``shared/papers/002_*.txt``); implementation notes with every
place where the authors' code differs from the paper: ``shared/specs/dpftsde.md``.

The private modules hold the mathematics, free of messages and estimators: ``_features``
(shared random Fourier features, a party's posterior sample of the weight vector), ``_regions``
(sub-regions, their assignment and the per-region softmax weights), ``_schedules`` (the weight
temperature and p_t schedules), ``_mechanism`` (the server's private aggregate),
``_acquisition`` (the arg-max over the unit cube) and ``_local`` (a party's step).
"""

from . import party  # noqa: F401 - registers the FTSStepTask handler
from .estimator import DPFTSDESearchCV
from .strategy import DPFTSDEStrategy
from .tasks import FTSStepReply, FTSStepTask

__all__ = ["DPFTSDESearchCV", "DPFTSDEStrategy", "FTSStepReply", "FTSStepTask"]
