"""
Reading the plots
=================

:mod:`fedsearch.plotting` has four displays. Each is built from a fitted search with
``from_search`` (or from simulated runs with ``from_trace``), draws on a matplotlib Axes and
keeps what it drew (``ax_``, ``figure_``, and its artists such as ``line_`` or
``scatters_``). This example draws each one on a search where the parties disagree and says
what to look for.
"""

# %%
# A federation whose parties disagree
# -----------------------------------
# Two hospitals have clean labels; the third has 30% of its labels flipped, so its scores are
# lower and it prefers stronger regularisation.
import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import loguniform
from sklearn.datasets import load_breast_cancer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from fedsearch import FLoRASearchCV, FederatedRandomizedSearchCV
from fedsearch.plotting import LossSurfaceDisplay, PartyScoresDisplay, RegretDisplay, SearchProgressDisplay
from fedsearch.research.simulate import simulate
from fedsearch.research.synthetic import garland, make_parties

X, y = load_breast_cancer(return_X_y=True)
rng = np.random.default_rng(0)
site = np.arange(len(y)) % 3
y_noisy = np.where((site == 2) & (rng.random(len(y)) < 0.3), 1 - y, y)
model = make_pipeline(StandardScaler(), SVC())
space = {"svc__C": loguniform(1e-2, 1e3), "svc__gamma": loguniform(1e-4, 1)}
search = FederatedRandomizedSearchCV(model, space, n_iter=12, cv=3, random_state=0)
search.fit(X, y_noisy, parties=site)

# %%
# SearchProgressDisplay: is the search still improving?
# -----------------------------------------------------
# The black line is the best federated score found so far; a flat tail means more budget
# would likely not help. A party's line far above the federation's means that party scores
# some configuration better than the federation does: its preferences differ.
SearchProgressDisplay.from_search(search, x="evaluations")

# %%
# PartyScoresDisplay: where do the parties disagree?
# --------------------------------------------------
# Configurations are ordered by federated score. Long grey bars are configurations the
# parties rank differently; a party that is consistently below the others (here party 2,
# with its noisy labels) pulls the weighted mean down but need not change the ranking. If the
# bars are long at the top, consider ``aggregate="min"`` (the worst party decides) or a
# personalised search (:class:`~fedsearch.PFPNESearchCV`).
display = PartyScoresDisplay.from_search(search)
print("largest disagreement:", np.nanmax(display.disagreement).round(3))

# %%
# LossSurfaceDisplay: what FLoRA's server believes
# ------------------------------------------------
# For :class:`~fedsearch.FLoRASearchCV` only. The curves are the surfaces' predicted loss
# (``1 - score``) along one parameter; the points are the parties' uploads. Where the points
# are sparse, the surfaces are extrapolating: SGM+U lies above SGM there. APLM and MPLM
# disagree where the parties do.
flora = FLoRASearchCV(model, space, n_iter=10, local_search="random", cv=3, random_state=0)
flora.fit(X, y_noisy, parties=site)
LossSurfaceDisplay.from_search(flora, "svc__gamma")

# %%
# RegretDisplay: comparing algorithms on known objectives
# -------------------------------------------------------
# On synthetic parties (:mod:`fedsearch.research.synthetic`) the optimum is known, so regret can be
# measured: the curve is the average per-party cumulative regret after each evaluation. A
# curve that flattens has found the optimum's region; a straight line keeps paying the same
# regret per evaluation (random search).
parties = make_parties(garland(), n_parties=4, kind="perturb", random_state=0)
traces = {name: simulate(name, parties, n_iter=256, random_state=0) for name in ("random", "fedpne", "levelorder")}
fig, ax = plt.subplots(figsize=(7, 4))
RegretDisplay.from_trace(traces, ax=ax)
ax.set_title("Garland, 4 parties")
