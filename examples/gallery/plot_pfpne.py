"""
PF-PNE: a configuration for each party
======================================

When the parties' data differ, the configuration that is best for the federation may be poor
for one of them. :class:`~fedsearch.PFPNESearchCV` (Li et al.) collaborates while the parties
agree (down to the depth set by ``delta``), then lets each party continue alone on its own
data. ``best_params_per_party_`` holds each party's configuration and ``personal_results_``
compares it with the federation's, on each party's data.
"""

# %%
# Parties that disagree
# ---------------------
# Three hospitals measure the same features; the third one's scanner is miscalibrated (its
# features are shifted and scaled), so a model tuned for the other two fits it less well.
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy.stats import loguniform
from sklearn.datasets import load_breast_cancer
from sklearn.svm import SVC

from fedsearch import PFPNESearchCV

X, y = load_breast_cancer(return_X_y=True)
X = (X - X.mean(0)) / X.std(0)
Xs = [X[0::3], X[1::3], 3.0 * X[2::3] + 1.0]
ys = [y[0::3], y[1::3], y[2::3]]

search = PFPNESearchCV(
    SVC(), {"C": loguniform(1e-2, 1e3), "gamma": loguniform(1e-4, 1)},
    n_iter=24, delta=0.25, cv=3, scoring="balanced_accuracy", random_state=0,
)
search.fit({"a": Xs[0], "b": Xs[1], "c": Xs[2]}, {"a": ys[0], "b": ys[1], "c": ys[2]})
print(f"collaborative rounds: {search.collaborative_rounds_}")
pd.DataFrame(search.personal_results_).round(4)

# %%
# Personal against federated configurations
# -----------------------------------------
# Each party's cross-validated score of its own configuration and of the federation's.
results = pd.DataFrame(search.personal_results_)
x = np.arange(len(results))
fig, ax = plt.subplots(figsize=(6, 4))
ax.bar(x - 0.2, results["global_test_score"], 0.4, label="federation's configuration")
ax.bar(x + 0.2, results["personal_test_score"], 0.4, label="party's own configuration")
ax.set_xticks(x, [f"party {p}" for p in results["party"]])
ax.set_ylim(0.5, 1.0)
ax.set_ylabel("balanced accuracy (party's own CV)")
ax.legend(loc="lower right")

# %%
# One model per party
# -------------------
# With the default ``final_fit="local"`` each party fits its own configuration on its own data
# and keeps the model: ``predict(X, party=...)`` uses it.
print(search.predict(Xs[2][:5], party="c"), ys[2][:5])
