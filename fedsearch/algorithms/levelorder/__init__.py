"""The level-order parallel X-armed bandit (003_*.txt, Algorithm 1)."""

from .estimator import LevelOrderSearchCV
from .strategy import LevelOrderStrategy

__all__ = ["LevelOrderSearchCV", "LevelOrderStrategy"]
