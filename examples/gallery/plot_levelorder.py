"""
Level-order bandit search
=========================

:class:`~fedsearch.LevelOrderSearchCV` (Chen et al.'s parallel X-armed bandit) walks the tree of
regions level by level: at each level every party evaluates every region of the level
``T_h`` times, and only the regions whose mean reward is close to the level's best are
expanded. The answer is the best region of the deepest level. Repeated evaluations of a
region's centre are answered from the party's cache, so ``n_iter`` counts evaluations, not fits.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import loguniform
from sklearn.datasets import load_breast_cancer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from fedsearch import LevelOrderSearchCV
from fedsearch.plotting import PartyScoresDisplay, SearchProgressDisplay

X, y = load_breast_cancer(return_X_y=True)
site = np.arange(len(y)) % 3

search = LevelOrderSearchCV(
    make_pipeline(StandardScaler(), SVC()),
    {"svc__C": loguniform(1e-2, 1e3), "svc__gamma": loguniform(1e-4, 1)},
    n_iter=200, cv=3, scoring="accuracy", random_state=0,
)
search.fit(X, y, parties=site)
best = search.best_params_
print(f"{len(search.strategy_.levels_)} levels, {len(search.cv_results_['params'])} configurations; "
      f"best: C={best['svc__C']:.3g}, gamma={best['svc__gamma']:.3g}, accuracy {search.best_score_:.3f}")

# %%
# One round per level
# -------------------
# Left: the best score after each level. Right: every region centre the parties evaluated, best
# federated score first, with each party's own score. The best score seen can come early (here
# the root's centre): the answer is the best region of the *deepest* level, a region the
# algorithm has confirmed, not the luckiest evaluation.
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
SearchProgressDisplay.from_search(search, ax=left)
PartyScoresDisplay.from_search(search, ax=right)
fig.tight_layout()
