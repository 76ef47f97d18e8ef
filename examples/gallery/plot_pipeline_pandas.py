"""
A Pipeline with a ColumnTransformer on pandas parties
=====================================================

Real parties hold tables with named, typed columns. Give each party's ``DataFrame`` in a dict
``{party id: X}``; every party must have the same columns. The estimator can be any
scikit-learn Pipeline, here one that scales the numeric columns and one-hot encodes the
categorical one, and the search space names the Pipeline's parameters (``step__param``), as
with :class:`~sklearn.model_selection.GridSearchCV`.
"""

# %%
# Three branches of a bank
# ------------------------
# A synthetic credit table with two numeric columns and a categorical one; each branch has its
# own mix of customers.
import numpy as np
import pandas as pd
from scipy.stats import loguniform
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from fedsearch import FederatedRandomizedSearchCV


def branch(n, income_mean, seed):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "income": rng.normal(income_mean, 15, n),
        "debt": rng.gamma(2.0, 10.0, n),
        "housing": rng.choice(["own", "rent", "family"], n, p=[0.5, 0.4, 0.1]),
    })
    logit = 0.05 * (X["income"] - 50) - 0.08 * (X["debt"] - 20) + (X["housing"] == "own") * 0.8
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return X, y


data = {name: branch(n, mean, seed) for seed, (name, n, mean)
        in enumerate([("paris", 300, 55), ("lyon", 200, 45), ("lille", 120, 50)])}
Xs = {name: X for name, (X, _) in data.items()}
ys = {name: y for name, (_, y) in data.items()}
Xs["paris"].head()

# %%
# The pipeline and the search
# ---------------------------
pre = ColumnTransformer([
    ("num", StandardScaler(), ["income", "debt"]),
    ("cat", OneHotEncoder(handle_unknown="ignore"), ["housing"]),
])
model = Pipeline([("pre", pre), ("clf", LogisticRegression())])
space = {"clf__C": loguniform(1e-3, 1e2), "pre__num__with_mean": [True, False]}
search = FederatedRandomizedSearchCV(model, space, n_iter=8, cv=3, scoring="roc_auc", random_state=0)
search.fit(Xs, ys)
print(search.best_params_, round(search.best_score_, 3))

# %%
# The final model keeps the column names
# --------------------------------------
# It was fitted on DataFrames, so it predicts from a DataFrame with the same columns.
print(search.feature_names_in_)
print(search.predict_proba(Xs["lille"].head())[:, 1].round(3))
