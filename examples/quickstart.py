"""The main job: a federated hyper-parameter search on data that scikit-learn ships.

Three hospitals each hold a share of the breast-cancer data. They tune an RBF SVC together
without sharing a row during the search: each cross-validates every candidate on its own data and
sends back only its scores. The final model here is the default pooled fit, which brings every
party's rows together (possible only in this in-process simulation): the transcript records that
transfer, and the script prints it. Run: ``python examples/quickstart.py``.
"""

import numpy as np
from scipy.stats import loguniform
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from fedsearch import FederatedRandomizedSearchCV

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, stratify=y, random_state=0)
hospital = np.random.default_rng(0).choice(["north", "south", "east"], size=len(y_train), p=[0.5, 0.3, 0.2])

search = FederatedRandomizedSearchCV(
    make_pipeline(StandardScaler(), SVC()),
    {"svc__C": loguniform(1e-2, 1e3), "svc__gamma": loguniform(1e-5, 10)},
    n_iter=20, cv=5, scoring="balanced_accuracy", random_state=0, n_jobs=-1,
)
search.fit(X_train, y_train, parties=hospital)

print("best configuration:", {k: float(f"{v:.4g}") for k, v in search.best_params_.items()})
print(f"federated CV score (size-weighted balanced accuracy): {search.best_score_:.4f}")
for party, size in search.party_sizes_.items():
    score = search.cv_results_[f"party_{party}_test_score"][search.best_index_]
    print(f"  party {party:>5} ({size:3d} samples): {score:.4f}")
print(f"final model (pooled fit), held-out balanced accuracy: {search.score(X_test, y_test):.4f}")
log = search.federation_log_
rows = [(party, n) for party, message, n in zip(log["party"], log["message"], log["bytes"]) if message == "PooledData"]
search_bytes = sum(n for message, n in zip(log["message"], log["bytes"]) if message != "PooledData")
print(f"search: {search.n_rounds_} round(s), {len(log['bytes']) - len(rows)} messages, {search_bytes} bytes, "
      f"no data row crossed a party boundary")
print("final fit (pooled): every data row crossed to the server: "
      + ", ".join(f"{party} {search.party_sizes_[party]} rows ({n} bytes)" for party, n in rows))
