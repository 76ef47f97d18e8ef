"""The Flower transport.

The tests marked ``flower`` start a real SuperLink and real parties (``python -m fedsearch.party``,
each a SuperNode) on 127.0.0.1 and stop every process they started, also when a test fails;
they take minutes (``-m "not flower"`` skips them). The others check the pieces in this process.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import loguniform
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import fedsearch
from fedsearch.federation.flower import FlowerFederation
from fedsearch.messages import (ErrorReply, EvaluateReply, EvaluateTask, FitReply, FitTask, SetupTask, decode,
                                encode, message_size)

pd = pytest.importorskip("pandas")

PARTIES = ("a", "b", "c")
REPO = Path(__file__).resolve().parents[1]


def _model():
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=200))


def _searches():
    space = {"logisticregression__C": loguniform(1e-3, 1e2)}
    common = {"cv": 3, "random_state": 0, "scoring": "roc_auc", "final_fit": "ensemble"}
    return {
        "grid": lambda: fedsearch.FederatedGridSearchCV(
            _model(), {"logisticregression__C": [0.001, 0.1, 10.0]}, cv=3, scoring="roc_auc", final_fit="ensemble"),
        "flora": lambda: fedsearch.FLoRASearchCV(_model(), space, n_iter=4, local_search="random", **common),
        "fedpne": lambda: fedsearch.FedPNESearchCV(_model(), space, n_iter=9, **common),
    }


@pytest.fixture(scope="module")
def silo_files(tmp_path_factory):
    """Three parties' data as CSV files (what each silo holds), and the same data as read back."""
    X, y = load_breast_cancer(return_X_y=True)
    idx = np.random.default_rng(0).permutation(len(y))[:150]
    X, y = X[idx], y[idx]
    folder = tmp_path_factory.mktemp("silos")
    files = {}
    for i, name in enumerate(PARTIES):
        frame = pd.DataFrame(X[i::3], columns=[f"f{j}" for j in range(X.shape[1])])
        frame["label"] = y[i::3]
        files[name] = folder / f"{name}.csv"
        frame.to_csv(files[name], index=False)
    return files


def _read(path):
    from fedsearch.party._flower_client import load_party_data

    return load_party_data({"party": "x", "data": str(path), "target": "label"})


# ------------------------------------------------------------------------ pieces, in this process
def test_relay_link_authenticates_and_carries_json(tmp_path):
    from fedsearch.federation._flower_relay import RelayListener, connect

    listener = RelayListener("127.0.0.1", tmp_path / "key")
    assert oct(os.stat(tmp_path / "key").st_mode & 0o777) == "0o600"
    (tmp_path / "wrong").write_bytes(b"not the key")
    got, done = {}, threading.Event()

    def peers():
        try:
            connect(*listener.address, tmp_path / "wrong").receive(timeout=5)
        except ConnectionError:
            got["refused"] = True
        link = connect(*listener.address, tmp_path / "key")
        link.send(link.receive(timeout=5))
        done.wait(10)  # keep the link open
        link.close()

    thread = threading.Thread(target=peers)
    thread.start()
    link = listener.accept(timeout=10)
    link.send({"x": [1.5, float("nan")], "s": "é"})
    echo = link.receive(timeout=10)
    assert got == {"refused": True}
    assert echo["s"] == "é" and echo["x"][0] == 1.5 and np.isnan(echo["x"][1])
    with pytest.raises(TimeoutError):
        link.receive(timeout=0.1)
    done.set()
    thread.join()
    with pytest.raises(ConnectionError):
        link.receive(timeout=5)
    with pytest.raises(TimeoutError):
        listener.accept(timeout=0.1)
    listener.close()


def test_party_answers_from_its_data_and_keeps_its_cache_in_state(silo_files):
    pytest.importorskip("flwr")
    from flwr.app import RecordDict

    from fedsearch.party._flower_client import answer
    from fedsearch.party import Party
    from fedsearch.space import SearchSpace

    config = {"party": "a", "data": str(silo_files["a"]), "target": "label"}
    state = RecordDict()
    space = SearchSpace({"logisticregression__C": loguniform(1e-3, 1e2)})
    setup = SetupTask(estimator=_model(), space=space, cv=3, scoring="roc_auc")
    before = decode(answer(encode(EvaluateTask(np.array([[0.5]]))).decode(), config, state))
    assert isinstance(before, ErrorReply) and before.kind == "setup" and "before the search's set-up" in before.error

    ready = decode(answer(encode(setup).decode(), config, state))
    assert (ready.n_samples, ready.n_splits) == (50, 3)
    task = EvaluateTask(np.array([[0.2], [0.7]]))
    first = decode(answer(encode(task).decode(), config, state))
    again = decode(answer(encode(task).decode(), config, state))  # a fresh party: cache from state
    X, y = _read(silo_files["a"])
    local = Party.from_setup("a", X, y, setup).handle(task)
    np.testing.assert_array_equal(first.scores, local.scores)
    assert isinstance(first, EvaluateReply) and not first.cached.any() and again.cached.all()
    np.testing.assert_array_equal(again.scores, first.scores)


def test_a_flower_party_never_renoises_a_release_though_each_message_is_a_fresh_process(silo_files):
    # DP-Fed-PNE's released values live in the run's state, as the cache does: a repeat of the
    # same quantity in a later task is answered with the value already released
    pytest.importorskip("flwr")
    from flwr.app import RecordDict
    from sklearn.tree import DecisionTreeClassifier

    from fedsearch.algorithms.xarmed.tasks import PullTask
    from fedsearch.algorithms.xarmed.tree import Partition
    from fedsearch.party._flower_client import answer
    from fedsearch.space import SearchSpace

    config, state = {"party": "a", "data": str(silo_files["a"]), "target": "label"}, RecordDict()
    setup = SetupTask(estimator=DecisionTreeClassifier(random_state=0), space=SearchSpace({"max_depth": [1, 2]}), cv=2)
    answer(encode(setup).decode(), config, state)
    tree = Partition(1, random_state=0)
    nodes = tree.children(tree.children(tree.root()))  # 4 nodes, 2 configurations
    released = np.array([decode(answer(encode(PullTask(
        tree=(1, "random", tree.seed), depth=2, index=nodes.index, counts=[2, 2, 2, 2], pull="center",
        noise_std=1.0, noise_seed=seed, clip=(0.0, 1.0))).decode(), config, state)).means for seed in range(3)])
    assert np.unique(released[:, :2]).size == 1 and np.unique(released[:, 2:]).size == 1
    assert released[0, 0] != released[0, 2]


def test_a_fitted_model_leaves_a_party_only_in_the_skops_format(silo_files, monkeypatch):
    pytest.importorskip("flwr")
    pytest.importorskip("skops")
    from flwr.app import RecordDict

    from fedsearch.party._flower_client import answer
    from fedsearch.space import SearchSpace

    config = {"party": "a", "data": str(silo_files["a"]), "target": "label"}
    state = RecordDict()
    space = SearchSpace({"logisticregression__C": loguniform(1e-3, 1e2)})
    answer(encode(SetupTask(estimator=_model(), space=space, cv=3)).decode(), config, state)
    fit = encode(FitTask(np.array([0.5]))).decode()
    reply = decode(answer(fit, config, state))
    assert isinstance(reply, FitReply) and reply.model.predict(_read(silo_files["a"])[0]).shape == (50,)
    monkeypatch.setitem(sys.modules, "skops", None)  # a party without skops
    refused = decode(answer(fit, config, state))
    assert isinstance(refused, ErrorReply) and "skops" in refused.error


def test_party_with_a_loader_and_a_failing_one(tmp_path, monkeypatch):
    pytest.importorskip("flwr")
    from flwr.app import RecordDict

    from fedsearch.party._flower_client import answer, load_party_data
    from fedsearch.space import SearchSpace

    (tmp_path / "silo_loader.py").write_text(
        "from sklearn.datasets import load_iris\n"
        "def load():\n    return load_iris(return_X_y=True)\n"
        "def broken():\n    raise OSError('the disk is gone')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    X, y = load_party_data({"party": "a", "loader": "silo_loader:load"})
    assert X.shape == (150, 4)
    setup = encode(SetupTask(estimator=LogisticRegression(), space=SearchSpace({"C": [0.1, 1.0]}), cv=3)).decode()
    reply = decode(answer(setup, {"party": "z", "loader": "silo_loader:broken"}, RecordDict()))
    # the kind and type only: the message stays in the party's log (tests/test_inputs.py)
    assert isinstance(reply, ErrorReply) and reply.kind == "setup" and "'z'" in reply.error
    assert "OSError" in reply.error and "the disk is gone" not in reply.error
    reply = decode(answer(setup, {"party": "z", "data": str(tmp_path / "x.csv")}, RecordDict()))
    assert isinstance(reply, ErrorReply) and reply.kind == "setup" and "ValueError" in reply.error


def test_a_flower_error_reason_stays_at_the_server_relay():
    # Flower's reason for a ClientApp that raised holds the exception's text: only the code's
    # fixed description may reach the search
    pytest.importorskip("flwr")
    from types import SimpleNamespace

    from fedsearch.federation._flower_server import _failure

    raised = SimpleNamespace(error=SimpleNamespace(code=2, reason="ValueError: unknown category 'HIV+ Jane Doe'"))
    assert _failure(raised, 5.0) == "the party's ClientApp raised an exception (see that SuperNode's log)"
    other = SimpleNamespace(error=SimpleNamespace(code=99, reason="Jane Doe"))
    assert "Jane" not in _failure(other, 5.0) and "99" in _failure(other, 5.0)


def test_party_command_line(tmp_path):
    from fedsearch.party.__main__ import _parser, node_config, supernode_command

    args = _parser().parse_args(["--name", "a", "--data", "silo a.csv", "--target", "y",
                                 "--superlink", "10.0.0.1:9092", "--insecure", "--port", "9100"])
    command = supernode_command(args, ["--max-retries", "3"])
    assert command[:3] == ["flower-supernode", "--superlink", "10.0.0.1:9092"]
    assert command[command.index("--node-config") + 1] == f"party='a' data='{Path('silo a.csv').resolve()}' target='y'"
    assert command[-3:] == ["--insecure", "--max-retries", "3"] and "9100" in command
    shared = _parser().parse_args(["--name", "a", "--loader", "m:f", "--superlink", "h:1", "--share-errors"])
    assert node_config(shared) == {"party": "a", "loader": "m:f", "share_errors": "true"}  # the party's opt-in
    assert "share_errors" not in node_config(args)
    with pytest.raises(SystemExit):
        _parser().parse_args(["--name", "a", "--superlink", "h:1"])  # no data


def test_party_command_fails_before_connecting_when_its_data_does_not_load(tmp_path):
    pytest.importorskip("flwr")
    from fedsearch.party.__main__ import main

    with pytest.raises(FileNotFoundError):
        main(["--name", "a", "--data", str(tmp_path / "missing.csv"), "--target", "y", "--superlink", "h:1",
              "--insecure"])
    with pytest.raises(SystemExit):
        main(["--name", "a", "--data", "a.csv", "--superlink", "h:1"])  # --data without --target


@pytest.mark.parametrize("kwargs, match", [
    ({"parties": []}, "distinct names"),
    ({"parties": ["a", "a"]}, "distinct names"),
    ({"parties": ["a"], "timeout": 0}, "'timeout' parameter"),
    ({"parties": ["a"], "connect_timeout": -1}, "'connect_timeout' parameter"),
])
def test_flower_federation_checks_its_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        FlowerFederation(**kwargs)


def test_pooled_final_fit_is_refused_before_any_round():
    federation = FlowerFederation(["a", "b"], insecure=True)
    search = fedsearch.FederatedGridSearchCV(_model(), {"logisticregression__C": [0.1, 1.0]}, final_fit="pooled")
    with pytest.raises(ValueError, match="final_fit=.ensemble."):
        search.fit(federation=federation)
    assert federation.run_id is None and federation.log()["round"] == []


# ------------------------------------------------------------------------ a real deployment
@pytest.fixture(scope="module")
def deployment(tmp_path_factory, silo_files):
    """A SuperLink and three parties on 127.0.0.1, stopped (by pid) whatever the tests do."""
    pytest.importorskip("flwr")
    from fedsearch.federation.loopback import LoopbackDeployment

    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    with LoopbackDeployment(tmp_path_factory.mktemp("flower"), env=env) as deployment:
        deployment.start_superlink()
        for name in PARTIES:
            deployment.start_party(name, data=silo_files[name], target="label")
        yield deployment


def _untimed_size(message) -> int:
    """Bytes of a message with its timings (and a fitted model) blanked: what two runs share."""
    timed = ("fit_time", "score_time", "std_fit_time", "std_score_time", "model")
    blank = {f.name: None for f in dataclasses.fields(message) if f.name in timed}
    return message_size(dataclasses.replace(message, **blank))


@pytest.mark.flower
@pytest.mark.parametrize("name", ["grid", "flora", "fedpne"])
def test_same_search_over_flower_as_in_process(name, deployment, silo_files):
    data = {p: _read(silo_files[p]) for p in PARTIES}
    local = _searches()[name]().fit({p: X for p, (X, _) in data.items()}, {p: y for p, (_, y) in data.items()})
    with FlowerFederation(PARTIES, deployment.superlink, insecure=True, timeout=300) as federation:
        remote = _searches()[name]().fit(federation=federation)
    np.testing.assert_array_equal(remote.cv_results_["mean_test_score"], local.cv_results_["mean_test_score"])
    assert remote.cv_results_["params"] == local.cv_results_["params"]
    assert remote.best_params_ == local.best_params_
    assert remote.n_rounds_ == local.n_rounds_
    for column in ("round", "party", "direction", "message"):
        assert remote.federation_log_[column] == local.federation_log_[column]
    def task_bytes(search):
        log = search.federation_log_
        return [b for b, d in zip(log["bytes"], log["direction"]) if d == "to_party"]

    assert task_bytes(remote) == task_bytes(local)
    assert [_untimed_size(m) for *_, m in remote.transcript_] == [_untimed_size(m) for *_, m in local.transcript_]
    X, _ = data["a"]
    np.testing.assert_array_equal(remote.predict(X), local.predict(X))


@pytest.mark.flower
def test_a_killed_party_is_reported_and_the_search_goes_on(deployment, silo_files):
    deployment.start_party("d", data=silo_files["c"], target="label")

    class KillsBeforeRoundOne(FlowerFederation):
        def _exchange(self, round, tasks):
            if round == 1:
                deployment.kill("d")
            return super()._exchange(round, tasks)

    t0 = time.monotonic()
    with KillsBeforeRoundOne(["a", "b", "d"], deployment.superlink, insecure=True, timeout=120) as federation:
        search = _searches()["fedpne"]().set_params(refit=False).fit(federation=federation)
    failures = [(r, p, m.error) for r, p, d, m in search.transcript_ if d == "to_server" and m.error]
    assert failures and all(p == "d" and r >= 1 for r, p, _ in failures)
    assert "party 'd' failed in round 1" in failures[0][2]
    assert np.isfinite(search.cv_results_["mean_test_score"]).any()
    assert time.monotonic() - t0 < 600


@pytest.mark.flower
def test_parties_that_do_not_answer_within_the_timeout_are_reported(deployment):
    search = _searches()["grid"]()
    with FlowerFederation(["a", "b"], deployment.superlink, insecure=True, timeout=0.5) as federation:
        with pytest.raises(ValueError, match="could not be set up.*no reply within the timeout of 0.5 s"):
            search.fit(federation=federation)
    assert federation.round_times[-1] < 30


def _certificates(folder: Path) -> tuple:
    """A CA and a certificate for 127.0.0.1 signed by it (PEM files), for a TLS SuperLink."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.timezone.utc)

    def certificate(subject, key, issuer, issuer_key, ca):
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
        builder = (x509.CertificateBuilder().subject_name(name).issuer_name(issuer or name)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
                   .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
                   .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()),
                                  critical=False))
        if ca:
            builder = builder.add_extension(x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False, data_encipherment=False,
                key_agreement=False, key_cert_sign=True, crl_sign=True, encipher_only=False, decipher_only=False),
                critical=True)
        else:
            builder = (builder.add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(
                "127.0.0.1"))]), critical=False)
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False))
        return builder.sign(issuer_key, hashes.SHA256())

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = certificate("fedsearch test CA", ca_key, None, ca_key, ca=True)
    cert = certificate("127.0.0.1", key, ca.subject, ca_key, ca=False)
    paths = folder / "ca.pem", folder / "server.pem", folder / "server.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return paths


@pytest.mark.flower
def test_a_search_over_tls(tmp_path, silo_files):
    pytest.importorskip("flwr")
    from fedsearch.federation.loopback import LoopbackDeployment

    data = {p: _read(silo_files[p]) for p in ("a", "b")}
    local = _searches()["grid"]().fit({p: X for p, (X, _) in data.items()}, {p: y for p, (_, y) in data.items()})
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    with LoopbackDeployment(tmp_path / "flower", env=env) as deployment:
        deployment.start_superlink(certificates=_certificates(tmp_path))
        for name in ("a", "b"):
            deployment.start_party(name, data=silo_files[name], target="label")
        with FlowerFederation(["a", "b"], deployment.superlink, root_certificates=deployment.root_certificates,
                              timeout=300) as federation:
            remote = _searches()["grid"]().fit(federation=federation)
    np.testing.assert_array_equal(remote.cv_results_["mean_test_score"], local.cv_results_["mean_test_score"])
    assert remote.best_params_ == local.best_params_
