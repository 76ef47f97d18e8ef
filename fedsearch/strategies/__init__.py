"""Server-side search strategies (see :class:`~fedsearch.strategies.base.Strategy`)."""

from .base import Strategy
from .candidates import CandidateStrategy, aggregate_scores
from .fedpne import FedPNEStrategy
from .levelorder import LevelOrderStrategy

__all__ = ["Strategy", "CandidateStrategy", "aggregate_scores", "FedPNEStrategy", "LevelOrderStrategy"]
