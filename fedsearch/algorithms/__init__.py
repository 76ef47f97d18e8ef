"""One folder per algorithm, each with the same file roles: ``tasks.py`` (its messages, where it
needs more than evaluations), ``party.py`` (their party-side handlers), ``strategy.py`` (the
server), ``estimator.py`` (the scikit-learn face). Importing this package registers every
algorithm's messages, handlers and strategies."""

from . import candidates, dpftsde, fedpne, flora, levelorder, pfpne  # noqa: F401

__all__ = ["candidates", "dpftsde", "fedpne", "flora", "levelorder", "pfpne"]
