import csv
import json
import sys
from argparse import Namespace

import numpy as np
import pytest

from benchmarks import SUITES, _common
from benchmarks.__main__ import main
from fedsearch.datasets import default_data_dir


def test_speed_suite_quick_smoke(tmp_path, capsys):
    status = main(["speed", "--quick", "--n-samples", "200", "--grid", "1", "--cv", "2",
                   "--methods", "grid", "random", "--n-jobs", "1", "--output", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "Part 1" in out and "ratio" in out and "Part 2" in out
    with open(tmp_path / "speed.csv") as f:
        rows = list(csv.DictReader(f))
    methods = [r["method"] for r in rows]
    assert methods.count("federated_grid") == methods.count("pooled_GridSearchCV") == 1
    assert {"grid", "random"} <= set(methods)
    fed = next(r for r in rows if r["method"] == "federated_grid")
    pooled = next(r for r in rows if r["method"] == "pooled_GridSearchCV")
    # the same fits: 1 configuration x 3 parties x 2 folds, on the same rows -> the same best score
    assert fed["n_fits"] == pooled["n_fits"] == "6"
    assert float(fed["wall"]) > 0 and int(fed["bytes"]) > 0 and int(fed["rounds"]) == 1
    record = json.loads((tmp_path / "speed.json").read_text())
    assert record["command"].startswith("python -m benchmarks speed --quick")
    assert len(record["runs"]) == len(rows) and record["environment"]["numpy"] == np.__version__


def test_unknown_suite_prints_usage(capsys):
    assert main(["nope"]) == 2
    assert "usage: python -m benchmarks {" + ",".join(SUITES) + "}" in capsys.readouterr().out
    assert {"flora", "bandits", "landmine", "speed"} <= set(SUITES)


def test_write_runs_csv_json_and_no_output(tmp_path):
    args = Namespace(output=tmp_path, suite="toy", quick=True, seeds=[0], n_jobs=2, command="cmd")
    rows = [{"method": "a", "best_params": {"C": np.float64(1.0)}, "score": np.nan},
            {"method": "b", "extra": np.int64(3)}]
    paths = _common.write_runs(args, rows)
    with open(paths[0]) as f:
        read = list(csv.DictReader(f))
    assert [r["method"] for r in read] == ["a", "b"]
    assert json.loads(read[0]["best_params"]) == {"C": 1.0} and read[1]["extra"] == "3"
    runs = json.loads(paths[1].read_text())["runs"]
    assert runs[0]["score"] is None and runs[1]["extra"] == 3
    assert _common.write_runs(Namespace(output=None, suite="toy"), rows) == []


def test_print_table_and_unavailable_record(capsys):
    row = _common.unavailable_record("fedsearch.X has not landed", method="x", seed=0)
    _common.print_table([row, {"method": "y", "score": 0.123456}], ["method", "score", "status"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["method", "score", "status"]
    assert "not available yet: fedsearch.X has not landed" in lines[2] and "-" in lines[2].split()
    assert lines[3].split()[:2] == ["y", "0.1235"]


def test_plots_are_skipped_without_matplotlib(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setattr(_common, "_NOTED", [])
    args = Namespace(output=tmp_path)
    assert _common.plot_boxes(args, "b", {"a": [1.0, 2.0]}, ylabel="y") is None
    assert "pip install 'fedsearch[plot]'" in capsys.readouterr().out


def test_plots_written_with_matplotlib(tmp_path):
    pytest.importorskip("matplotlib")
    args = Namespace(output=tmp_path)
    x = np.arange(5)
    assert _common.plot_curves(args, "c", {"a": (x, np.vstack([x, x + 1.0]))}, xlabel="t", ylabel="r").is_file()
    assert _common.plot_bars(args, "b", ["m1", "m2"], {"wall": [1.0, 2.0]}, ylabel="s").is_file()
    assert _common.plot_boxes(args, "x", {"a": [0.5, np.nan, 2.0]}, ylabel="r", reference=(1.0, "default")).is_file()


@pytest.mark.skipif(not (default_data_dir() / "heart_statlog.csv.gz").is_file(),
                    reason="benchmark files of ../shared/data are absent")
def test_flora_suite_tiny_run_records_every_method_against_one_baseline(tmp_path, capsys):
    status = main(["flora", "--datasets", "heart_statlog", "--n-iter", "3", "--folds", "2",
                   "--seeds", "0", "--split", "parity_skew", "--n-jobs", "1", "--output", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 0, out
    with open(tmp_path / "flora.csv") as f:
        rows = list(csv.DictReader(f))
    methods = ["sgm", "sgm+u", "aplm", "mplm", "alone", "random", "fedpne", "levelorder", "pfpne"]
    assert [r["method"] for r in rows] == methods
    assert {(r["split"], r["baseline"], r["best"]) for r in rows} == {("parity_skew", rows[0]["baseline"],
                                                                       rows[0]["best"])}
    for r in rows:  # every regret is (a* - a) / (a* - b) of the recorded pooled scores
        a, best, b = float(r["score"]), float(r["best"]), float(r["baseline"])
        assert float(r["regret"]) == pytest.approx((best - a) / (best - b))
        assert json.loads(r["best_params"]).keys() == {"max_iter", "learning_rate", "min_samples_leaf",
                                                       "l2_regularization"}
    by = {r["method"]: r for r in rows}
    # the budget: the random search cross-validates T = 3 configurations; "alone" one per party at most
    assert by["random"]["n_configurations"] == "3" and 1 <= int(by["alone"]["n_configurations"]) <= 3
    assert int(by["fedpne"]["bytes"]) > 0 and int(by["alone"]["rounds"]) == 1
    assert "W/T/L" in out and "Wilcoxon" in out


@pytest.mark.skipif(not (default_data_dir() / "heart_statlog.csv.gz").is_file(),
                    reason="benchmark files of ../shared/data are absent")
@pytest.mark.parametrize("method", ["random", "bo"])
def test_flora_suite_reads_every_validated_pick_off_one_fit(method):
    # one fit that validates every candidate gives the pick of every n_validate and surface
    from sklearn.model_selection import StratifiedKFold

    from benchmarks.flora import _validated_picks
    from fedsearch import FLoRASearchCV, presets
    from fedsearch.datasets import load_benchmark

    estimator, space, _ = presets.get("hgb")
    estimator.set_params(random_state=0)
    data = load_benchmark("heart_statlog")
    site = np.arange(len(data.target)) % 3
    Xs, ys = [data.data[site == i] for i in range(3)], [data.target[site == i] for i in range(3)]
    common = dict(n_iter=4, local_search=method, cv=StratifiedKFold(2, shuffle=True, random_state=0),
                  scoring="balanced_accuracy", refit=False, random_state=1, n_jobs=1)
    picks = _validated_picks(FLoRASearchCV(estimator, space, n_validate=5, **common).fit(Xs, ys), [1, 2, 3, 5])
    for surface in ("aplm", "mplm"):
        for k in (1, 2, 3, 5):
            search = FLoRASearchCV(estimator, space, surface=surface, n_validate=k, **common).fit(Xs, ys)
            assert picks[surface, k] == (search.best_params_, pytest.approx(search.best_score_))


@pytest.mark.skipif(not (default_data_dir() / "heart_statlog.csv.gz").is_file(),
                    reason="benchmark files of ../shared/data are absent")
def test_flora_suite_runs_several_local_searches_on_one_split_and_caches_the_pooled_scores(tmp_path, capsys):
    argv = ["flora", "--datasets", "heart_statlog", "--n-iter", "3", "--folds", "2", "--seeds", "0",
            "--split", "stratified", "--scoring-repeats", "2", "--local-search", "random", "bo",
            "--n-validate", "2", "--competitors", "random", "--n-jobs", "1", "--cache", str(tmp_path / "c.json"),
            "--output", str(tmp_path)]
    assert main(argv) == 0
    with open(tmp_path / "flora.csv") as f:
        rows = list(csv.DictReader(f))
    flora = ["sgm", "sgm+u", "aplm", "mplm", "sgm+v2", "sgm+u+v2", "aplm+v2", "mplm+v2"]
    assert [(r["local_search"], r["method"]) for r in rows] == (
        [("random", m) for m in flora] + [("bo", m) for m in flora] + [("-", "random")])
    cached = json.loads((tmp_path / "c.json").read_text())
    assert all(k.startswith("hgb|heart_statlog|") for k in cached)
    # a* (out of sample) and b: scored on the repeated splits, which the central search never saw
    oos = [v for k, v in cached.items() if "RepeatedStratifiedKFold(4, 1)" in k]
    assert float(rows[0]["best"]) in oos and float(rows[0]["baseline"]) in oos
    first = capsys.readouterr().out
    assert main(argv) == 0  # the second run re-scores nothing and finds the same regrets
    with open(tmp_path / "flora.csv") as f:
        assert [r["regret"] for r in csv.DictReader(f)] == [r["regret"] for r in rows]
    assert json.loads((tmp_path / "c.json").read_text()) == cached
    assert "aplm+v2/bo" in first and "centralised best" in first


@pytest.mark.skipif(not (default_data_dir() / "flora_paper_runs" / "picks.csv").is_file(),
                    reason="the FLoRA paper's runs of ../shared/data are absent")
def test_flora_suite_scores_the_papers_picks_in_the_same_frame(tmp_path, capsys):
    from benchmarks import flora_replay

    assert main(["flora", "--datasets", "heart_statlog", "--n-iter", "2", "--folds", "2", "--seeds", "0", "1",
                 "--split", "stratified", "--local-search", "--competitors", "random", "--paper-picks",
                 "--n-jobs", "1", "--output", str(tmp_path)]) == 0
    with open(tmp_path / "flora.csv") as f:
        rows = list(csv.DictReader(f))
    picks = flora_replay.paper_picks(default_data_dir(), "hgb", "heart_statlog")
    paper = [r for r in rows if r["method"].startswith("paper:")]
    assert [(r["seed"], r["method"]) for r in paper] == [(s, f"paper:{m}") for s in "01" for m in
                                                         ("sgm", "sgm+u", "aplm", "mplm")]
    for r in paper:  # the paper's configuration, scored like every other pick
        assert json.loads(r["best_params"]) == picks[r["method"][6:]][0]
        assert float(r["regret"]) == pytest.approx((float(r["best"]) - float(r["score"]))
                                                   / (float(r["best"]) - float(r["baseline"])))
    assert "minus paper" in capsys.readouterr().out


@pytest.mark.skipif(not (default_data_dir() / "flora_paper_runs" / "picks.csv").is_file(),
                    reason="the FLoRA paper's runs of ../shared/data are absent")
def test_flora_suite_in_the_paper_frame_gives_table_7_for_the_papers_picks(tmp_path, capsys):
    # heart-statlog's rows are the paper's: its split, seed and a* reproduce Table 7 to the digit
    argv = ["flora", "--datasets", "heart_statlog", "--n-iter", "2", "--folds", "2", "--seeds", "0",
            "--split", "stratified", "--competitors", "--paper-picks", "--paper-frame", "--n-jobs", "1",
            "--cache", str(tmp_path / "c.json"), "--output", str(tmp_path)]
    assert main(argv) == 0
    with open(tmp_path / "flora.csv") as f:
        rows = {r["method"]: r for r in csv.DictReader(f)}
    assert float(rows["aplm"]["baseline"]) == pytest.approx(0.7942, abs=5e-5)
    assert float(rows["aplm"]["best"]) == pytest.approx(0.8558, abs=5e-5)  # the paper's 600-evaluation a*
    table7 = {"sgm": 0.69, "sgm+u": 0.55, "aplm": 0.50, "mplm": 0.89}
    assert {s: round(float(rows[f"paper:{s}"]["regret"]), 2) for s in table7} == table7
    cached = json.loads((tmp_path / "c.json").read_text())
    # fedsearch's own picks are scored in the same frame, under the frame's own keys
    assert all(k.startswith("hgb|heart_statlog|paper frame|") for k in cached)
    assert any(k.endswith(repr(sorted(json.loads(rows["aplm"]["best_params"]).items()))) for k in cached)
    capsys.readouterr()
    with pytest.raises(SystemExit, match="--scoring-repeats"):  # one split: no repeated scoring
        main([*argv, "--scoring-repeats", "2"])


def test_personal_suite_without_pyxab_reports_hct_as_unavailable(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "PyXAB.algos.HCT", None)
    status = main(["personal", "--part", "synthetic", "--objectives", "garland", "--n-iter", "20",
                   "--parties", "2", "--seeds", "0", "--deltas", "0.01"])
    out = capsys.readouterr().out
    assert status == 0, out
    hct = next(line for line in out.splitlines() if line.split()[1:2] == ["hct"])
    assert "pip install 'fedsearch[bandits]'" in hct and "random" in out


@pytest.mark.skipif(not (default_data_dir() / "heart_statlog.csv.gz").is_file(),
                    reason="benchmark files of ../shared/data are absent")
def test_flora_suite_records_a_split_that_cannot_run_and_goes_on(tmp_path, capsys):
    # Dirichlet(0.01) label skew leaves a party with one class: that seed is a failed record
    status = main(["flora", "--datasets", "heart_statlog", "--n-iter", "2", "--folds", "2", "--seeds", "0",
                   "--split", "label_skew", "--alpha", "0.01", "--competitors", "--n-jobs", "1",
                   "--output", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 0, out
    with open(tmp_path / "flora.csv") as f:
        rows = list(csv.DictReader(f))
    assert [(r["seed"], r["status"][:7]) for r in rows] == [("0", "failed:")]
    assert "only one class" in rows[0]["status"] and "seed 0: no run" in out


def test_dpftsde_suite_pairs_each_method_with_ts_field_by_field():
    from benchmarks.dpftsde import _paired

    rows = [{"method": "TS", "seed": 0, "field_one_minus_auc": [0.3, 0.2, 0.1]},
            {"method": "FTS", "seed": 0, "field_one_minus_auc": [0.2, 0.2, 0.2]},
            {"method": "FTS", "seed": 1, "field_one_minus_auc": [0.0, 0.0, 0.0]}]  # no TS of seed 1: unpaired
    (row,) = _paired(rows)
    assert row["method"] == "FTS" and row["seed"] == 0
    assert row["difference"] == pytest.approx(0.0) and row["se"] == pytest.approx(np.std([-0.1, 0, 0.1], ddof=1) / np.sqrt(3))


def test_dpftsde_suite_pools_paired_differences_across_fields_and_seeds():
    from benchmarks.dpftsde import _paired, _pooled

    rows = [{"method": "TS", "seed": 0, "field_one_minus_auc": [0.3, 0.2, 0.1]},
            {"method": "TS", "seed": 1, "field_one_minus_auc": [0.3, 0.3, 0.3]},
            {"method": "FTS", "seed": 0, "field_one_minus_auc": [0.2, 0.2, 0.2]},
            {"method": "FTS", "seed": 1, "field_one_minus_auc": [0.4, 0.3, 0.3]}]
    (pooled,) = _pooled(_paired(rows))
    # differences: seed 0 (-0.1, 0, 0.1), seed 1 (0.1, 0, 0); per field (0, 0, 0.05), per seed (0, 1/30)
    assert pooled["seeds"] == 2 and pooled["difference"] == pytest.approx(1 / 60)
    assert pooled["se_fields"] == pytest.approx(np.std([0, 0, 0.05], ddof=1) / np.sqrt(3))
    assert pooled["se_seeds"] == pytest.approx(np.std([0, 1 / 30], ddof=1) / np.sqrt(2))


def test_read_runs_gives_back_what_write_runs_wrote(tmp_path):
    args = Namespace(output=tmp_path, suite="s", quick=False, seeds=[0], n_jobs=1)
    rows = [{"method": "DP-FTS-DE, random", "seed": 3, "auc": 0.25, "fields": [0.1, 0.2], "curve": {"0": 0.3},
             "epsilon": None}]
    csv_path, _ = _common.write_runs(args, rows)
    assert _common.read_runs([csv_path, csv_path]) == rows * 2


@pytest.mark.slow
@pytest.mark.skipif(not (default_data_dir() / "landmine.csv.gz").is_file(), reason="the landmine data is not here")
def test_dpftsde_suite_tiny_run(tmp_path, capsys):
    status = main(["dpftsde", "--quick", "--iterations", "1", "--methods", "TS", "DP-FTS-DE",
                   "--output", str(tmp_path)])
    assert status == 0
    record = json.loads((tmp_path / "dpftsde.json").read_text())
    ts, dp = record["runs"]
    assert (ts["method"], dp["method"]) == ("TS", "DP-FTS-DE") and "epsilon" in dp and "epsilon" not in ts
    assert 0 < ts["one_minus_auc"] < 1 and len(ts["field_one_minus_auc"]) == 29
