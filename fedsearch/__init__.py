"""fedsearch: federated hyper-parameter search across data silos, with a scikit-learn face."""

from .bandit_search import FedPNESearchCV, LevelOrderSearchCV
from .federation import InProcessFederation
from .flora import FLoRASearchCV
from . import metrics, presets, synthetic
from .party import Party
from .personal_search import PFPNESearchCV
from .search import FederatedGridSearchCV, FederatedRandomizedSearchCV
from .simulate import simulate
from .space import SearchSpace

__version__ = "0.1.0"

__all__ = [
    "FedPNESearchCV",
    "FederatedGridSearchCV",
    "FederatedRandomizedSearchCV",
    "FLoRASearchCV",
    "InProcessFederation",
    "LevelOrderSearchCV",
    "metrics",
    "Party",
    "PFPNESearchCV",
    "presets",
    "SearchSpace",
    "simulate",
    "synthetic",
    "__version__",
]
