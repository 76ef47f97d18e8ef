"""Grid and randomized federated search (every party cross-validates every candidate)."""

from .estimator import FederatedGridSearchCV, FederatedRandomizedSearchCV
from .strategy import CandidateStrategy, RandomSearchStrategy

__all__ = ["CandidateStrategy", "FederatedGridSearchCV", "FederatedRandomizedSearchCV", "RandomSearchStrategy"]
