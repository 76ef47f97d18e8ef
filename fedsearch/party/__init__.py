"""The party side: answers tasks with summaries of its own data (or of a synthetic function).

Handlers are registered per task type (:func:`register_handler`) and speak to a party through
the :class:`LocalObjective` protocol; :class:`Party` is the data party.
"""

from . import evaluate  # noqa: F401 - registers the EvaluateTask handler
from .base import BaseParty
from .data import Party
from .objective import LocalObjective, Summary
from .registry import Unit, register_handler, run_unit

__all__ = ["BaseParty", "LocalObjective", "Party", "Summary", "Unit", "register_handler", "run_unit"]
