import gzip
import sys
import types

import numpy as np
import pytest

from fedsearch import datasets
from fedsearch.datasets import (
    SPLITTERS,
    fetch_openml_parties,
    load_benchmark,
    assign_parties,
    split_by_column,
    split_disjoint_labels,
    split_iid,
    split_label_skew,
    split_parity_skew,
    split_quantity_skew,
)

HAVE_DATA = (datasets.default_data_dir() / "landmine.csv.gz").is_file()
needs_data = pytest.mark.skipif(not HAVE_DATA, reason="benchmark files of ../shared/data are absent")


def _write(path, header, rows):
    with gzip.open(path, "wt") as f:
        f.write(",".join(header) + "\n")
        for row in rows:
            f.write(",".join(str(v) for v in row) + "\n")


# --------------------------------------------------------------------------- loader
@needs_data
@pytest.mark.parametrize("name, shape, counts", [
    ("heart_statlog", (270, 13), [150, 120]),
    ("sonar", (208, 60), [97, 111]),
    ("pollen", (3848, 5), [1924, 1924]),
    ("oil_spill", (937, 49), [896, 41]),
    ("pc3", (1563, 37), [1403, 160]),
])
def test_load_benchmark_matches_the_data_readme(name, shape, counts):
    data = load_benchmark(name)
    assert data.data.shape == shape and data.data.dtype == float
    assert np.bincount(data.target).tolist() == counts
    assert len(data.feature_names) == shape[1] and data.extra_names == []


@needs_data
def test_landmine_fields_are_the_natural_parties():
    data = load_benchmark("landmine")
    assert data.data.shape == (14820, 9) and data.extra_names == ["field"]
    parties = split_by_column(np.column_stack([data.data, data.field]), 9)
    sizes = {f: int((parties == f).sum()) for f in np.unique(parties)}
    positives = {f: int(data.target[parties == f].sum()) for f in np.unique(parties)}
    assert len(sizes) == 29
    # README: 1:690(40) 4:508(19) 16:445(32) 29:449(42)
    assert (sizes[1], positives[1]) == (690, 40) and (sizes[4], positives[4]) == (508, 19)
    assert (sizes[16], positives[16]) == (445, 32) and (sizes[29], positives[29]) == (449, 42)


@needs_data
def test_pollen_shuffle_breaks_the_label_order_and_keeps_rows():
    plain = load_benchmark("pollen")
    assert plain.target[:1924].all() and not plain.target[1924:].any()  # sorted by label
    a = load_benchmark("pollen", shuffle=True, random_state=0)
    b = load_benchmark("pollen", shuffle=True, random_state=0)
    np.testing.assert_array_equal(a.data, b.data)
    assert 0.4 < a.target[:1924].mean() < 0.6
    rows = {tuple(r) + (t,) for r, t in zip(plain.data, plain.target)}
    assert rows == {tuple(r) + (t,) for r, t in zip(a.data, a.target)}


def test_load_benchmark_reads_the_format_from_the_env_dir(tmp_path, monkeypatch):
    _write(tmp_path / "toy.csv.gz", ["a", "b", "target", "site"], [[0.5, 1, 0, 3], [1.5, -2, 1, 4]])
    monkeypatch.setenv("FEDSEARCH_DATA_DIR", str(tmp_path))
    data = load_benchmark("toy")
    np.testing.assert_array_equal(data.data, [[0.5, 1.0], [1.5, -2.0]])
    np.testing.assert_array_equal(data.target, [0, 1])
    np.testing.assert_array_equal(data.site, [3, 4])
    assert data.feature_names == ["a", "b"] and datasets.list_benchmarks() == ["toy"]


def test_load_benchmark_missing_file_names_path_and_option(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"--data-dir") as info:
        load_benchmark("sonar", data_dir=tmp_path)
    assert str(tmp_path / "sonar.csv.gz") in str(info.value)


# --------------------------------------------------------------------------- partitioners
def test_partition_iid_counts_and_determinism():
    labels = split_iid(103, 4, random_state=0)
    assert labels.shape == (103,) and set(labels) == {0, 1, 2, 3}
    assert np.bincount(labels).tolist() == [26, 26, 26, 25]
    np.testing.assert_array_equal(labels, split_iid(103, 4, random_state=0))
    assert not np.array_equal(labels, split_iid(103, 4, random_state=1))


def _skew(y, parties):
    """Mean total-variation distance between each party's class mix and the global mix."""
    glob = np.bincount(y) / len(y)
    return np.mean([0.5 * np.abs(np.bincount(y[parties == p], minlength=len(glob)) / (parties == p).sum()
                                 - glob).sum() for p in np.unique(parties)])


def test_label_skew_actually_skews_and_alpha_controls_it():
    y = np.repeat(np.arange(5), 200)
    skewed = split_label_skew(y, 6, alpha=0.1, random_state=0)
    mild = split_label_skew(y, 6, alpha=1000.0, random_state=0)
    assert set(skewed) == set(mild) == set(range(6))
    assert _skew(y, skewed) > 0.4
    assert _skew(y, mild) < 1.5 * _skew(y, split_iid(len(y), 6, random_state=0)) < 0.1  # sampling noise only
    np.testing.assert_array_equal(skewed, split_label_skew(y, 6, alpha=0.1, random_state=0))


def test_label_skew_min_samples_and_impossible_request():
    y = np.repeat([0, 1], 30)
    labels = split_label_skew(y, 4, alpha=0.05, random_state=0, min_samples=5)
    assert np.bincount(labels, minlength=4).min() >= 5
    with pytest.raises(ValueError, match="raise alpha"):
        split_label_skew(y, 4, alpha=0.001, random_state=0, min_samples=14)
    with pytest.raises(ValueError, match="only 60 samples"):
        split_label_skew(y, 61, alpha=1.0)


def test_parity_skew_favours_one_parity_four_to_one():
    # FLoRA App. D.8 "imb1": P(party 0 | even class) = 4/5, so party 0 holds 80% even classes
    y = np.tile(np.arange(10), 2000)
    parties = split_parity_skew(y, 2, random_state=0)
    assert abs(np.mean(y[parties == 0] % 2 == 0) - 0.8) < 0.02
    assert abs(np.mean(y[parties == 1] % 2 == 1) - 0.8) < 0.02
    assert abs(np.mean(parties == 0) - 0.5) < 0.02
    np.testing.assert_array_equal(parties, split_parity_skew(y, 2, random_state=0))


def test_disjoint_labels_as_in_flora_imb2():
    y = np.repeat(np.arange(10), 3)
    parties = split_disjoint_labels(y, 4)
    classes = [set(y[parties == p]) for p in range(4)]
    assert classes == [{0, 1}, {2, 3}, {4, 5}, {6, 7, 8, 9}]
    with pytest.raises(ValueError, match="2 classes for 3 parties"):
        split_disjoint_labels(np.repeat([0, 1], 5), 3)


def test_quantity_skew_sizes():
    sizes = np.bincount(split_quantity_skew(1000, 5, alpha=0.2, random_state=0, min_samples=10), minlength=5)
    assert sizes.sum() == 1000 and sizes.min() >= 10 and sizes.max() > 3 * sizes.min()
    even = np.bincount(split_quantity_skew(1000, 5, alpha=1e4, random_state=0))
    assert even.max() - even.min() < 40
    np.testing.assert_array_equal(split_quantity_skew(50, 3, random_state=3),
                                  split_quantity_skew(50, 3, random_state=3))


def test_partition_by_column_dataframe_and_errors():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"x": [0.1, 0.2, 0.3], "site": ["a", "b", "a"]})
    assert split_by_column(frame, "site").tolist() == ["a", "b", "a"]
    with pytest.raises(KeyError, match="no column 'city'"):
        split_by_column(frame, "city")
    with pytest.raises(ValueError, match="NaN"):
        split_by_column(np.array([[1.0, np.nan]]), 1)
    with pytest.raises(ValueError, match="not a column"):
        split_by_column(np.ones((2, 2)), 2)


@pytest.mark.parametrize("split", SPLITTERS)
def test_partition_dispatch_gives_every_sample_a_party(split):
    y = np.repeat(np.arange(4), 25)
    labels = assign_parties(y, 4, split=split, random_state=0)
    assert labels.shape == (100,) and set(labels) == {0, 1, 2, 3}
    np.testing.assert_array_equal(labels, assign_parties(y, 4, split=split, random_state=0))


@pytest.mark.parametrize("call, message", [
    (lambda: split_iid(10, 0), r"The 'n_parties' parameter of split_iid must be an int in the range \[1, inf\)\. Got 0 instead\."),
    (lambda: split_label_skew([0, 1, 0], 2, alpha=0), r"The 'alpha' parameter of split_label_skew must be a float in the range \(0, inf\)\. Got 0 instead\."),
    (lambda: split_parity_skew([0, 1], 1), r"'n_parties' parameter of split_parity_skew must be an int in the range \[2, inf\)"),
    (lambda: assign_parties([0, 1], 2, split="dirichlet"), r"The 'split' parameter of assign_parties must be one of"),
    (lambda: split_label_skew([[0, 1]], 2), r"must be 1-D"),
    (lambda: load_benchmark(3), r"The 'name' parameter of load_benchmark must be"),
])
def test_partitioner_errors(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


# --------------------------------------------------------------------------- OpenML
def test_fetch_openml_without_the_package_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "openml", None)
    with pytest.raises(ImportError, match=r"pip install 'fedsearch\[openml\]'"):
        fetch_openml_parties(40, 3)


def _fake_openml(get_dataset):
    fake = types.ModuleType("openml")
    fake.datasets = types.SimpleNamespace(get_dataset=get_dataset)
    fake.config = types.SimpleNamespace(get_cache_directory=lambda: "/cache/openml")
    return fake


def test_fetch_openml_offline_is_a_clear_connection_error(monkeypatch):
    def offline(data_id, **kwargs):
        raise OSError("Failed to resolve 'www.openml.org'")

    monkeypatch.setitem(sys.modules, "openml", _fake_openml(offline))
    with pytest.raises(ConnectionError, match=r"OpenML dataset 40.*cache \(/cache/openml\).*load_benchmark"):
        fetch_openml_parties(40, 3)


def test_fetch_openml_encodes_and_partitions(monkeypatch):
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame({"num": np.arange(12.0), "cat": pd.Categorical(list("abc") * 3 + [None, "a", "b"])})
    y = pd.Series(["R", "M"] * 6, dtype="category")
    dataset = types.SimpleNamespace(name="toy", default_target_attribute="Class",
                                    get_data=lambda target: (X, y, [False, True], ["num", "cat"]))
    monkeypatch.setitem(sys.modules, "openml", _fake_openml(lambda data_id, **kw: dataset))
    out = fetch_openml_parties(7, 3, random_state=0)
    assert out.data.shape == (12, 2) and out.name == "toy"
    np.testing.assert_array_equal(out.data[:4, 1], [0, 1, 2, 0])
    assert np.isnan(out.data[9, 1])
    assert out.target_names.tolist() == ["M", "R"] and out.target.tolist() == [1, 0] * 6
    np.testing.assert_array_equal(out.parties, split_iid(12, 3, random_state=0))
