"""
Grid search across hospitals
============================

:class:`~fedsearch.FederatedGridSearchCV` is the drop-in replacement for scikit-learn's
:class:`~sklearn.model_selection.GridSearchCV` when the data sits in several places. Every
party (here three hospitals holding parts of the breast-cancer data) cross-validates every
configuration of the grid *on its own data* and sends back only its mean scores; the
federation's score of a configuration is the aggregate of the parties' scores.
"""

# %%
# Three hospitals of unequal size
# -------------------------------
# ``parties`` gives the party of every sample; a list or dict of per-party datasets works too.
import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from fedsearch import FederatedGridSearchCV
from fedsearch.plotting import PartyScoresDisplay

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)
hospital = np.random.default_rng(0).choice(["north", "south", "east"], size=len(y_train), p=[0.6, 0.3, 0.1])

model = make_pipeline(StandardScaler(), LogisticRegression())
search = FederatedGridSearchCV(
    model, {"logisticregression__C": np.logspace(-3, 2, 6)}, cv=3, scoring="balanced_accuracy"
)
search.fit(X_train, y_train, parties=hospital)
print("best configuration:", search.best_params_)
print(f"federated CV score: {search.best_score_:.3f}; held-out score: {search.score(X_test, y_test):.3f}")

# %%
# ``cv_results_`` has scikit-learn's layout plus one column per party
# -------------------------------------------------------------------
# ``mean_test_score`` is the federation's score (weighted by party size by default,
# ``aggregate="mean"`` or ``"min"`` otherwise); ``party_<id>_test_score`` is each party's own.
columns = ["param_logisticregression__C", "mean_test_score", "rank_test_score"] + [
    f"party_{p}_test_score" for p in search.party_ids_
]
pd.DataFrame(search.cv_results_)[columns].round(3)

# %%
# Where the parties agree
# -----------------------
# One column per configuration, best federated score first: each party's own score, the grey
# bar from the lowest to the highest, and the federation's score in black. The small "east"
# hospital is the noisiest: with a tenth of the data its cross-validation scores vary most.
display = PartyScoresDisplay.from_search(search)
_ = display.ax_.set_title("Balanced accuracy of every configuration, party by party")

# %%
# What crossed the party boundary
# -------------------------------
# Every message is in ``federation_log_``: one task to each party and one reply back.
pd.DataFrame(search.federation_log_)
