"""fedsearch: federated hyper-parameter search across data silos, with a scikit-learn face."""

from .federation import InProcessFederation
from .flora import FLoRASearchCV
from .party import Party
from .search import FederatedGridSearchCV, FederatedRandomizedSearchCV
from .space import SearchSpace

__version__ = "0.1.0"

__all__ = [
    "FederatedGridSearchCV",
    "FederatedRandomizedSearchCV",
    "FLoRASearchCV",
    "InProcessFederation",
    "Party",
    "SearchSpace",
    "__version__",
]
