"""fedsearch: federated hyper-parameter search across data silos, with a scikit-learn face."""

from .federation import InProcessFederation
from .party import Party
from .space import SearchSpace

__version__ = "0.1.0"

__all__ = ["InProcessFederation", "Party", "SearchSpace", "__version__"]
