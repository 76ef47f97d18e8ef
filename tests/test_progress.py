"""Progress and resume: scikit-learn's callbacks see the task tree (from workers too), verbose
prints what it says, and a killed search resumes from its checkpoint to the uninterrupted result."""

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import loguniform
from sklearn.linear_model import LogisticRegression

from fedsearch import FedPNESearchCV, FederatedGridSearchCV, FLoRASearchCV

pytest.importorskip("sklearn.callback")


class Recorder:
    """A FitCallback that appends every event to a file (so events from workers arrive too)."""

    def __init__(self, path):
        self.path = str(path)

    def setup(self, estimator, context):
        pass

    def teardown(self, estimator, context):
        pass

    def _write(self, kind, context):
        path = []
        ctx = context
        while ctx is not None:
            path.append(ctx.task_name)
            ctx = ctx.parent
        with open(self.path, "a") as f:
            f.write(json.dumps([kind, list(reversed(path))]) + "\n")

    def on_fit_task_begin(self, estimator, context):
        self._write("begin", context)

    def on_fit_task_end(self, estimator, context):
        self._write("end", context)


def _events(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def _parties(cancer):
    X, y = cancer
    return [X[i::3] for i in range(3)], [y[i::3] for i in range(3)]


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_callbacks_see_rounds_parties_and_every_fit(cancer, tmp_path, n_jobs):
    Xs, ys = _parties(cancer)
    log = tmp_path / "events.jsonl"
    search = FederatedGridSearchCV(LogisticRegression(), {"C": [0.1, 1.0]}, cv=3, n_jobs=n_jobs)
    search.set_callbacks(Recorder(log)).fit(Xs, ys)
    events = _events(log)
    ends = [tuple(p) for kind, p in events if kind == "end"]
    leaves = [p for p in ends if p == ("fit", "round", "party 0", "fit")]
    assert len(leaves) == 2 * 3  # configurations x folds, reported from the workers
    assert sum(p[:2] == ("fit", "round") and len(p) == 4 for p in ends) == 3 * 2 * 3
    assert {p for p in ends if len(p) == 3} == {("fit", "round", f"party {i}") for i in range(3)}
    assert ("fit", "final fit") in ends and ends[-1] == ("fit",)
    begins = [tuple(p) for kind, p in events if kind == "begin"]
    assert begins[0] == ("fit",) and len(begins) == len(ends)


def _flora_ends(cancer, tmp_path, local_search) -> list[tuple]:
    Xs, ys = _parties(cancer)
    log = tmp_path / "events.jsonl"
    search = FLoRASearchCV(LogisticRegression(), {"C": loguniform(1e-2, 1e2)}, n_iter=4, cv=2,
                           local_search=local_search, random_state=0, refit=False)
    search.set_callbacks(Recorder(log)).fit(Xs, ys)
    return [tuple(p) for kind, p in _events(log) if kind == "end"]


def test_flora_reports_an_adaptive_local_search_trial_by_trial(cancer, tmp_path):
    trials = [p for p in _flora_ends(cancer, tmp_path, "bo") if p[-1] == "trial"]
    assert len(trials) == 3 * 4 and all(p[-2] == "local search" for p in trials)


def test_flora_reports_a_random_local_search_fit_by_fit(cancer, tmp_path):
    """Random search draws its trials at once: every (trial, fold) is a unit of work, reported."""
    ends = _flora_ends(cancer, tmp_path, "random")
    local_round = [p for p in ends[:ends.index(("fit", "round"))] if len(p) > 3]  # the leaves of round 0
    assert sorted(local_round) == sorted(("fit", "round", f"party {i}", "fit") for i in range(3) for _ in range(4 * 2))


def test_verbose_levels_print_what_they_say(cancer, capsys):
    Xs, ys = _parties(cancer)
    space = {"C": loguniform(1e-2, 1e2)}
    out = {}
    for level in (1, 2, 3):
        FLoRASearchCV(LogisticRegression(), space, n_iter=4, cv=2, local_search="random", random_state=0,
                      refit=False, verbose=level).fit(Xs, ys)
        out[level] = capsys.readouterr().out.splitlines()
    assert len(out[1]) == 2  # the local-search round and the validation round
    # the local search: 3 parties x 4 trials x 2 folds, counted as fits (not "3 fits")
    assert "round 0: 3 parties, 24 fits, best federated score so far none yet" in out[1][0]
    assert "best federated score so far 0." in out[1][1]
    assert len(out[2]) == 2 + 2 * 3 and "party 0: LocalSearchReply, 4 new configurations (8 fits), ok" in out[2][1]
    # level 3: a line per configuration a party evaluated anew (a validated point a party had
    # already tried is answered from its cache: no line, no fit)
    new = sum(int(re.search(r"(\d+) new configurations", line).group(1)) for line in out[2] if "new conf" in line)
    assert 12 < new <= 12 + 3 and len(out[3]) == len(out[2]) + new and "{'C': " in out[3][2]


SCRIPT = textwrap.dedent("""
    import sys, time
    import numpy as np
    from scipy.stats import loguniform
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from fedsearch import FedPNESearchCV

    class SlowLogisticRegression(LogisticRegression):
        def fit(self, X, y, **kw):
            time.sleep(0.02)
            return super().fit(X, y, **kw)

    def search(checkpoint=None):
        return FedPNESearchCV(SlowLogisticRegression(max_iter=300), {"C": loguniform(1e-3, 1e2)},
                              n_iter=30, cv=2, random_state=0, checkpoint=checkpoint)

    def data():
        X, y = load_breast_cancer(return_X_y=True)
        X = (X - X.mean(0)) / X.std(0)
        return [X[i::3][:60] for i in range(3)], [y[i::3][:60] for i in range(3)]

""")


@pytest.mark.slow
def test_a_killed_search_resumes_to_the_uninterrupted_result(tmp_path, monkeypatch):
    (tmp_path / "slow_search.py").write_text(SCRIPT)
    monkeypatch.syspath_prepend(str(tmp_path))
    import slow_search

    path = tmp_path / "search.json"
    run = "import sys, slow_search; slow_search.search(sys.argv[1]).fit(*slow_search.data())"
    proc = subprocess.Popen([sys.executable, "-c", run, str(path)], cwd=tmp_path)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if path.exists() and len(json.loads(path.read_text())["rounds"]) >= 2:
                os.kill(proc.pid, signal.SIGKILL)
                break
            time.sleep(0.02)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the search ended before it could be killed"
    done = len(json.loads(path.read_text())["rounds"])

    resumed = slow_search.search(path).fit(*slow_search.data())
    whole = slow_search.search().fit(*slow_search.data())
    assert resumed.resumed_rounds_ == list(range(done)) and done >= 2
    assert resumed.cv_results_["params"] == whole.cv_results_["params"]
    np.testing.assert_array_equal(resumed.cv_results_["mean_test_score"], whole.cv_results_["mean_test_score"])
    assert resumed.best_params_ == whole.best_params_
    assert resumed.federation_log_["message"] == whole.federation_log_["message"]
    # the finished rounds were not sent again: no EvaluateTask of a resumed round reached a party live
    assert resumed.n_rounds_ == whole.n_rounds_

    # a checkpoint written by another search is refused, before any work
    other = slow_search.search(path).set_params(n_iter=31)
    with pytest.raises(ValueError, match=r"written by a different search \(it differs in \['params'\]\)"):
        other.fit(*slow_search.data())
    assert not hasattr(other, "cv_results_")


def test_a_checkpoint_needs_an_int_seed(cancer, tmp_path):
    Xs, ys = _parties(cancer)
    search = FedPNESearchCV(LogisticRegression(), {"C": loguniform(1e-2, 1e2)}, n_iter=4, cv=2,
                            checkpoint=tmp_path / "c.json")
    with pytest.raises(ValueError, match="'checkpoint' parameter of FedPNESearchCV needs an int random_state"):
        search.fit(Xs, ys)
