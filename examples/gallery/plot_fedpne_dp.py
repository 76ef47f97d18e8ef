"""
Differential privacy for Fed-PNE: choosing ``dp_epsilon`` and ``dp_delta``
==========================================================================

A party's reply in Fed-PNE is its CV scores of the configurations it was sent. Scores are
summaries, but they still depend on the party's data. DP-Fed-PNE (Li et al., App. D.2) has
each party add Gaussian noise to every reward before it replies, with variance

.. math:: \\sigma^2 = \\frac{2 \\log(1.25 / \\delta)}{\\varepsilon^2}

(rewards in ``[0, 1]``), which makes the search :math:`(\\varepsilon, \\delta)`-differentially
private with respect to each party's rewards. A smaller ``dp_epsilon`` means more privacy and
more noise; ``dp_delta`` is the small probability of the guarantee failing and should be well
below ``1 / n_samples``.
"""

# %%
# The noise each choice adds
# --------------------------
import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import loguniform
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from fedsearch import FedPNESearchCV

dp_delta = 1e-5
for eps in (0.5, 2.0, 8.0, 32.0):
    print(f"dp_epsilon={eps:>5}: reward noise std {np.sqrt(2 * np.log(1.25 / dp_delta)) / eps:.3f}")

# %%
# What the server sees, and what it costs
# ---------------------------------------
# The same search without privacy and with decreasing ``dp_epsilon``. The regularisation ``C``
# of a logistic regression matters here: below about ``1e-3`` the model predicts the majority
# class. Left: the federated score of every configuration tried, *as the server saw it*
# (``cv_results_`` holds the noisy rewards, so it can leave ``[0, 1]``). Right: the held-out
# accuracy of the configuration each search picked.
X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)
site = np.arange(len(y_train)) % 3
model = make_pipeline(StandardScaler(), LogisticRegression())
space = {"logisticregression__C": loguniform(1e-5, 1e2)}

fig, (seen, held_out) = plt.subplots(1, 2, figsize=(11, 4))
labels, scores = [], []
for eps in (None, 8.0, 2.0, 0.5):
    search = FedPNESearchCV(model, space, n_iter=24, cv=3, scoring="accuracy", random_state=1,
                            dp_epsilon=eps, dp_delta=None if eps is None else dp_delta)
    search.fit(X_train, y_train, parties=site)
    label = "no DP" if eps is None else f"eps={eps:g}"
    C = np.array([p["logisticregression__C"] for p in search.cv_results_["params"]])
    seen.scatter(C, search.cv_results_["mean_test_score"], s=12, label=label)
    labels.append(label)
    scores.append(search.score(X_test, y_test))
seen.set(xscale="log", xlabel="C", ylabel="federated reward seen by the server")
seen.legend()
held_out.bar(labels, scores, color=["grey"] + ["C0"] * 3)
held_out.set_ylim(0.5, 1.0)
_ = held_out.set(ylabel="held-out accuracy of the chosen C", title=f"dp_delta={dp_delta:g}, one seed")

# %%
# Choosing
# --------
# - Fix ``dp_delta`` first (below ``1 / n``, e.g. ``1e-5``), then take the smallest
#   ``dp_epsilon`` whose noise std stays near the score differences you care about; with a
#   std far above them the search is close to a random one, and which configuration wins is
#   luck (rerun with other ``random_state`` values to see the spread).
# - A larger ``n_iter`` averages more noisy rewards per region and recovers some accuracy.
# - ``best_score_`` is a noisy reward too: measure the chosen configuration on held-out data.
# - The guarantee covers the rewards sent during the search; ``final_fit="pooled"`` is a
#   simulation device and ``"ensemble"`` ships fitted models, which are not covered.
