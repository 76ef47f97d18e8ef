"""PF-PNE: personalized federated X-armed bandit, one configuration per party (001_*.txt)."""

from . import party  # noqa: F401 - registers the PersonalTask handler
from .estimator import PFPNESearchCV
from .strategy import PFPNEStrategy
from .tasks import PersonalReply, PersonalTask

__all__ = ["PFPNESearchCV", "PFPNEStrategy", "PersonalReply", "PersonalTask"]
