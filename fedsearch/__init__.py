"""fedsearch: federated hyper-parameter search across data silos, with a scikit-learn face.

The public face is the search estimators and :class:`SearchSpace`. Transports live in
:mod:`fedsearch.federation`, the party side in :mod:`fedsearch.party`, one folder per algorithm
in :mod:`fedsearch.algorithms`, research tools (synthetic objectives, ``simulate``, regret) in
:mod:`fedsearch.research`.
"""

from .algorithms.candidates import FederatedGridSearchCV, FederatedRandomizedSearchCV
from .algorithms.dpftsde import DPFTSDESearchCV
from .algorithms.fedpne import FedPNESearchCV
from .algorithms.flora import FLoRASearchCV
from .algorithms.levelorder import LevelOrderSearchCV
from .algorithms.pfpne import PFPNESearchCV
from .space import SearchSpace

__version__ = "0.1.0"

__all__ = [
    "DPFTSDESearchCV",
    "FedPNESearchCV",
    "FederatedGridSearchCV",
    "FederatedRandomizedSearchCV",
    "FLoRASearchCV",
    "LevelOrderSearchCV",
    "PFPNESearchCV",
    "SearchSpace",
    "__version__",
]
