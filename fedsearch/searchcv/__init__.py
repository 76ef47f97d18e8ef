"""The scikit-learn face shared by every search estimator."""

from . import docs
from .base import BaseFederatedSearchCV

__all__ = ["BaseFederatedSearchCV", "docs"]
