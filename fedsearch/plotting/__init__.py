"""Plots of federated searches as scikit-learn style Display objects (``pip install fedsearch[plot]``).

Each display is built from a fitted search with ``from_search(search)`` (or from simulated traces
with ``from_trace(trace)``), draws on a matplotlib Axes (a new one unless ``ax`` is given) and
keeps what it drew: ``ax_``, ``figure_`` and the artists (``line_``, ``lines_``,
``scatters_``...). ``display.plot(ax=...)`` draws the same data again elsewhere. matplotlib is
imported only when something is drawn.

- :class:`SearchProgressDisplay`: the best federated and per-party score by round or by
  evaluations;
- :class:`PartyScoresDisplay`: every configuration's score in every party, and where they disagree;
- :class:`LossSurfaceDisplay`: FLoRA's loss surfaces along 1-D / 2-D slices, with the parties'
  uploaded points;
- :class:`RegretDisplay`: cumulative regret curves of simulated runs.
"""

from ._party_scores import PartyScoresDisplay
from ._progress import SearchProgressDisplay
from ._regret import RegretDisplay
from ._surfaces import LossSurfaceDisplay

__all__ = ["LossSurfaceDisplay", "PartyScoresDisplay", "RegretDisplay", "SearchProgressDisplay"]
