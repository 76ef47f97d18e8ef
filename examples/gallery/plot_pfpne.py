"""
PF-PNE: a configuration for each party
======================================

When the parties' data differ, the configuration that is best for the federation may be poor
for one of them. :class:`~fedsearch.PFPNESearchCV` (Li et al.) collaborates while the parties
agree (down to the depth set by ``gap``, a bound on how far a party's best score may lie from
the federation's), then lets each party continue alone on its own
data. ``best_params_per_party_`` holds each party's configuration and ``personal_results_``
compares it with the federation's, on each party's data.
"""

# %%
# Parties that disagree
# ---------------------
# Three hospitals measure the same features, but the third records them on a scale ten times
# larger. An RBF kernel without a scaler then wants a ``gamma`` about a hundred times smaller
# there: the parties' best configurations differ.
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy.stats import loguniform
from sklearn.datasets import load_breast_cancer
from sklearn.svm import SVC

from fedsearch import PFPNESearchCV

X, y = load_breast_cancer(return_X_y=True)
X = (X - X.mean(0)) / X.std(0)
Xs = [X[0::3], X[1::3], 10.0 * X[2::3]]
ys = [y[0::3], y[1::3], y[2::3]]

search = PFPNESearchCV(
    SVC(), {"C": loguniform(1e-2, 1e3), "gamma": loguniform(1e-5, 1)},
    n_iter=32, gap=0.25, cv=3, scoring="balanced_accuracy", random_state=0,
)
search.fit({"a": Xs[0], "b": Xs[1], "c": Xs[2]}, {"a": ys[0], "b": ys[1], "c": ys[2]})
print(f"collaborative rounds: {search.collaborative_rounds_}")
pd.DataFrame(search.personal_results_).round(4)

# %%
# Personal against federated configurations
# -----------------------------------------
# Each party's cross-validated score of its own configuration and of the federation's
# (``gain_test_score`` is the difference). A personal configuration is not always better: with
# a small budget a party's own stage sees few configurations, and its choice rests on its own,
# noisier, cross-validation. Read the gains together with the party's size.
results = pd.DataFrame(search.personal_results_)
x = np.arange(len(results))
fig, ax = plt.subplots(figsize=(6, 4))
ax.bar(x - 0.2, results["global_test_score"], 0.4, label="federation's configuration")
ax.bar(x + 0.2, results["personal_test_score"], 0.4, label="party's own configuration")
ax.set_xticks(x, [f"party {p}" for p in results["party"]])
ax.set_ylim(0.5, 1.0)
ax.set_ylabel("balanced accuracy (party's own CV)")
_ = ax.legend(loc="lower right")

# %%
# One model per party
# -------------------
# With the default ``final_fit="local"`` each party fits its own configuration on its own data
# and keeps the model: ``predict(X, party=...)`` uses it.
print(search.predict(Xs[2][:5], party="c"), ys[2][:5])
