"""FLoRA: single-shot federated hyper-parameter search by loss-surface aggregation (004_*.txt)."""

from . import party  # noqa: F401 - registers the local-search handler
from .estimator import FLoRASearchCV
from .strategy import FLoRAStrategy
from .tasks import LocalSearchReply, LocalSearchTask

__all__ = ["FLoRASearchCV", "FLoRAStrategy", "LocalSearchReply", "LocalSearchTask"]
