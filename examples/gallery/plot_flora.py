"""
FLoRA: single-shot search by loss-surface aggregation
=====================================================

:class:`~fedsearch.FLoRASearchCV` (Zhou et al.) asks each party for one thing: run your own
hyper-parameter search on your own data and upload the (configuration, loss) pairs you tried,
once. The server fits a loss surface on the uploads and recommends its arg-min over the whole
space; every party then validates that one recommendation. One fit gives the recommendations
of all four surfaces of the paper:

- ``sgm``: one regressor on the union of the pairs;
- ``sgm+u``: the same plus its uncertainty (the spread of the forest's trees);
- ``aplm``: the average of one regressor per party;
- ``mplm``: the maximum of the per-party regressors (the worst party's view).
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import loguniform
from sklearn.datasets import load_breast_cancer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from fedsearch import FLoRASearchCV
from fedsearch.plotting import LossSurfaceDisplay

X, y = load_breast_cancer(return_X_y=True)
site = np.arange(len(y)) % 3

search = FLoRASearchCV(
    make_pipeline(StandardScaler(), SVC()),
    {"svc__C": loguniform(1e-2, 1e3), "svc__gamma": loguniform(1e-4, 1)},
    surface="aplm", n_iter=12, local_search="random", cv=3, scoring="balanced_accuracy",
    random_state=0,
)
search.fit(X, y, parties=site)
for surface, params in search.surface_params_.items():
    print(f"{surface:>6}: C={params['svc__C']:.3g}, gamma={params['svc__gamma']:.3g}")
print(f"validated score of the APLM recommendation: {search.best_score_:.3f}")
print(f"heterogeneity gamma_p: {search.heterogeneity_:.3f}")

# %%
# The four surfaces along ``C``
# -----------------------------
# A 1-D slice through the recommendation: ``C`` varies, ``gamma`` stays at its recommended
# value. The points are the pairs each party uploaded (projected onto the slice: they were
# tried at other values of ``gamma``); the stars are each surface's arg-min. The x-axis is the
# unit cube FLoRA models on, where a ``loguniform`` parameter is on its log scale.
fig, ax = plt.subplots(figsize=(7, 4))
LossSurfaceDisplay.from_search(search, "svc__C", ax=ax)

# %%
# Each surface over both parameters
# ---------------------------------
# A 2-D slice shows one surface per Axes: draw the four side by side. MPLM is high wherever
# *some* party's model is, so its minimum sits where every party is content.
fig, axes = plt.subplots(2, 2, figsize=(10, 8), sharex=True, sharey=True)
for ax, surface in zip(axes.ravel(), ["sgm", "sgm+u", "aplm", "mplm"]):
    LossSurfaceDisplay.from_search(search, ["svc__C", "svc__gamma"], surfaces=surface, resolution=30, ax=ax)
fig.tight_layout()
