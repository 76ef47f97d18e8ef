"""Fed-PNE and DP-Fed-PNE: federated phased node elimination (000_*.txt)."""

from .estimator import FedPNESearchCV
from .strategy import FedPNEStrategy

__all__ = ["FedPNESearchCV", "FedPNEStrategy"]
