"""PF-PNE: personalized federated X-armed bandit, one configuration per party (001_*.txt)."""

from .estimator import PFPNESearchCV
from .strategy import PFPNEStrategy

__all__ = ["PFPNESearchCV", "PFPNEStrategy"]
