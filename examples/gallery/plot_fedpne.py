"""
Fed-PNE: phased node elimination
================================

:class:`~fedsearch.FedPNESearchCV` (Li et al.) treats the search space as a tree of regions
(each split halves a random dimension) and runs in phases: in every phase each party pulls
the surviving regions, the server averages the rewards (the parties' CV scores, which must lie
in ``[0, 1]``) and eliminates the regions that are clearly worse, then splits the survivors.
The number of rounds grows like ``log n_iter``.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import loguniform
from sklearn.datasets import load_breast_cancer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from fedsearch import FedPNESearchCV
from fedsearch.plotting import SearchProgressDisplay

X, y = load_breast_cancer(return_X_y=True)
site = np.arange(len(y)) % 4

search = FedPNESearchCV(
    make_pipeline(StandardScaler(), SVC()),
    {"svc__C": loguniform(1e-2, 1e3), "svc__gamma": loguniform(1e-4, 1)},
    n_iter=24, cv=3, scoring="accuracy", random_state=0,
)
search.fit(X, y, parties=site)
print(f"{search.n_rounds_} rounds, {len(search.cv_results_['params'])} configurations evaluated")
print(f"{len(search.strategy_.phases_)} phases, then a round in which every party cross-validates the recommendation")
print({k: round(v, 4) for k, v in search.best_params_.items()}, round(search.best_score_, 3))

# %%
# Progress round by round
# -----------------------
# Each round but the last is one phase; in the last, every party cross-validates the
# recommended configuration. The federation's best score is that of the best configuration
# every party has scored by then (the recommendation need not be the best one seen: Fed-PNE
# recommends a region of the space, not a lucky point).
fig, ax = plt.subplots(figsize=(7, 4))
SearchProgressDisplay.from_search(search, ax=ax)
ax.set_title("FedPNESearchCV: best accuracy by round")

# %%
# The server's state: one phase per round
# ---------------------------------------
# ``strategy_`` is the server-side state machine after the search. Each entry of its
# ``phases_`` records a phase: the active regions of the tree, how many pulls each party spent
# on each, and which regions the phase eliminated. The survivors are split for the next phase.
for phase in search.strategy_.phases_:
    print(f"round {phase.round}: {len(phase.eliminated)} regions, {int(phase.pulls.sum())} pulls per party, "
          f"{int(phase.eliminated.sum())} eliminated{' (budget cut the phase short)' if phase.truncated else ''}")
