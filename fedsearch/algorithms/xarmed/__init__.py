"""What the X-armed bandits share: the tree of boxes, node statistics, rewards, the estimator base,
and the pull protocol (``tasks.py``, ``party.py``)."""

from . import party  # noqa: F401 - registers the PullTask handler
from .tasks import PullReply, PullTask

__all__ = ["PullReply", "PullTask"]
