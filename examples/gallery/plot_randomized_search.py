"""
Randomized search and its progress
==================================

:class:`~fedsearch.FederatedRandomizedSearchCV` samples ``n_iter`` configurations from the
distributions of the space (frozen ``scipy.stats`` distributions or lists), and every party
cross-validates each of them, as :class:`~sklearn.model_selection.RandomizedSearchCV` does on
one dataset. :class:`~fedsearch.plotting.SearchProgressDisplay` shows how fast the best
score grew.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import loguniform
from sklearn.datasets import load_breast_cancer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from fedsearch import FederatedRandomizedSearchCV
from fedsearch.plotting import SearchProgressDisplay

X, y = load_breast_cancer(return_X_y=True)
site = np.random.default_rng(1).integers(0, 3, size=len(y))  # three sites

search = FederatedRandomizedSearchCV(
    make_pipeline(StandardScaler(), SVC()),
    {"svc__C": loguniform(1e-2, 1e3), "svc__gamma": loguniform(1e-5, 10)},
    n_iter=12, cv=3, scoring="balanced_accuracy", random_state=0,
)
search.fit(X, y, parties=site)
print({k: round(v, 4) for k, v in search.best_params_.items()}, round(search.best_score_, 3))

# %%
# The best score after each evaluation
# ------------------------------------
# An *evaluation* is one configuration cross-validated by one party. The federation's best
# score (black) counts a configuration once every party has scored it; each party's line is
# the best of its own scores. All candidates of a random search go out in one round, so the
# x-axis counts evaluations in the order of the transcript: party after party.
fig, ax = plt.subplots(figsize=(7, 4))
SearchProgressDisplay.from_search(search, x="evaluations", ax=ax)
ax.set_title("FederatedRandomizedSearchCV: best score so far")
