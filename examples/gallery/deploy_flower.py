"""
Across real silos: a search over Flower
=======================================

Each party runs next to its own data as a Flower SuperNode (``python -m fedsearch.party``) and
the search runs at the server with :class:`~fedsearch.federation.FlowerFederation` instead of
in-process parties: the estimator and its parameters are the same, only ``fit`` changes. This
example is shown, not run, when the documentation is built (it starts a SuperLink and two
parties and takes about a minute); run it yourself after ``pip install "fedsearch[flower,skops]"``.
The deployment guide has what changes on real hosts (TLS, SuperNode authentication, stable
party names).
"""

# %%
# The two silos' data: here, halves of a dataset scikit-learn ships, as CSV files.
from sklearn.datasets import load_breast_cancer

frame = load_breast_cancer(as_frame=True).frame
frame.iloc[0::2].to_csv("a.csv", index=False)
frame.iloc[1::2].to_csv("b.csv", index=False)

# %%
# A SuperLink and one party per silo, on this machine's loopback (free ports, every process
# stopped on exit). On real hosts each party runs at its silo:
# ``python -m fedsearch.party --name a --data a.csv --target target --superlink HOST:PORT``.
from scipy.stats import loguniform
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from fedsearch import FLoRASearchCV
from fedsearch.federation import FlowerFederation
from fedsearch.federation.loopback import LoopbackDeployment

search = FLoRASearchCV(make_pipeline(StandardScaler(), LogisticRegression()),
                       {"logisticregression__C": loguniform(1e-3, 1e2)}, n_iter=6, cv=3,
                       scoring="roc_auc", final_fit="ensemble", random_state=0)

# %%
# The search: the same call as in-process, with the parties reached over Flower. Only
# fedsearch's JSON messages cross (the final models in the skops format); the transcript shows
# each of them, and the same seed gives the same results as the in-process run.
with LoopbackDeployment("flower-work") as deployment:
    deployment.start_superlink()
    deployment.start_party("a", data="a.csv", target="target")
    deployment.start_party("b", data="b.csv", target="target")
    with FlowerFederation(["a", "b"], deployment.superlink, insecure=True) as federation:
        search.fit(federation=federation)
print(search.best_params_)
print(list(zip(search.federation_log_["round"], search.federation_log_["party"],
               search.federation_log_["message"])))
