"""Transports: a :class:`Federation` runs rounds and keeps the transcript; each transport
implements one exchange method."""

from .base import SETUP_ROUND, Federation
from .inprocess import InProcessFederation

__all__ = ["Federation", "InProcessFederation", "SETUP_ROUND"]
