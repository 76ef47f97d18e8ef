"""
Level-order bandit search
=========================

:class:`~fedsearch.LevelOrderSearchCV` (Chen et al.'s parallel X-armed bandit) walks the tree of
regions level by level: at each level every party evaluates every region of the level a few
times, and only the regions whose mean reward is close to the level's best are expanded. The
answer is the best region of the deepest level.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_wine
from sklearn.ensemble import HistGradientBoostingClassifier
from scipy.stats import loguniform, randint

from fedsearch import LevelOrderSearchCV
from fedsearch.plotting import PartyScoresDisplay, SearchProgressDisplay

X, y = load_wine(return_X_y=True)
site = np.arange(len(y)) % 2

search = LevelOrderSearchCV(
    HistGradientBoostingClassifier(max_iter=20, early_stopping=False),
    {"learning_rate": loguniform(1e-2, 1), "max_leaf_nodes": randint(2, 32)},
    n_iter=24, cv=3, scoring="accuracy", random_state=0,
)
search.fit(X, y, parties=site)
best = search.best_params_
print(f"{search.n_rounds_} levels; best: learning_rate={best['learning_rate']:.3g}, "
      f"max_leaf_nodes={best['max_leaf_nodes']}; accuracy {search.best_score_:.3f}")

# %%
# One round per level
# -------------------
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
SearchProgressDisplay.from_search(search, ax=left)
PartyScoresDisplay.from_search(search, ax=right)
fig.tight_layout()
