"""Transports: a :class:`Federation` runs rounds and keeps the transcript; each transport
implements one exchange method. :class:`InProcessFederation` runs the parties in this process,
:class:`FlowerFederation` reaches parties on their own machines through Flower."""

from .base import SETUP_ROUND, Federation
from .flower import FlowerFederation
from .inprocess import InProcessFederation

__all__ = ["Federation", "FlowerFederation", "InProcessFederation", "SETUP_ROUND"]
