"""
Differential privacy for Fed-PNE: choosing ``dp_epsilon`` and ``dp_delta``
==========================================================================

A party's reply in Fed-PNE is its CV scores of the configurations it was sent. Scores are
summaries, but they still depend on the party's data. DP-Fed-PNE (Li et al., App. D.2) has
each party add Gaussian noise to every reward before it replies, with variance

.. math:: \\sigma^2 = \\frac{2 \\log(1.25 / \\delta)}{\\varepsilon^2}

(rewards in ``[0, 1]``), which makes the whole search :math:`(\\varepsilon, \\delta)`
differentially private with respect to each party's rewards. Smaller ``dp_epsilon`` means
more privacy and more noise; ``dp_delta`` is the small probability of the guarantee failing
and should be well below ``1 / n_samples``.
"""

# %%
# The noise each choice adds
# --------------------------
import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import loguniform
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from fedsearch import FedPNESearchCV

dp_delta = 1e-5
for eps in (0.5, 2.0, 8.0, 32.0):
    print(f"dp_epsilon={eps:>5}: reward noise std {np.sqrt(2 * np.log(1.25 / dp_delta)) / eps:.3f}")

# %%
# What the noise costs
# --------------------
# The same search without privacy and with decreasing ``dp_epsilon``; the figure shows the
# held-out accuracy of the configuration each one picked. With a noise std far above the gaps
# between configurations' scores (a few hundredths here) the search is close to random.
X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)
site = np.arange(len(y_train)) % 3
model = make_pipeline(StandardScaler(), SVC())
space = {"svc__C": loguniform(1e-2, 1e3), "svc__gamma": loguniform(1e-4, 10)}

choices = [None, 32.0, 8.0, 2.0]
scores = []
for eps in choices:
    search = FedPNESearchCV(model, space, n_iter=16, cv=3, scoring="accuracy", random_state=0,
                            dp_epsilon=eps, dp_delta=None if eps is None else dp_delta)
    search.fit(X_train, y_train, parties=site)
    scores.append(search.score(X_test, y_test))

fig, ax = plt.subplots(figsize=(6, 4))
ax.bar(["no DP"] + [f"eps={e:g}" for e in choices[1:]], scores, color=["grey"] + ["C0"] * 3)
ax.set_ylim(min(scores) - 0.05, 1.0)
ax.set_ylabel("held-out accuracy of the chosen configuration")
ax.set_title(f"DP-Fed-PNE, dp_delta={dp_delta:g}")

# %%
# Choosing
# --------
# - Fix ``dp_delta`` first (below ``1 / n``, e.g. ``1e-5``), then take the smallest
#   ``dp_epsilon`` whose noise std stays near the score differences you care about.
# - A larger ``n_iter`` averages more noisy rewards per region and recovers some accuracy.
# - The guarantee covers the rewards sent during the search; ``final_fit="pooled"`` is a
#   simulation device and ``"ensemble"`` ships models, which are not covered.
