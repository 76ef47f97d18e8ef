import os
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris

DATA_DIR = Path(os.environ.get("FEDSEARCH_DATA_DIR", Path(__file__).resolve().parents[1].parent / "shared" / "data"))
os.environ.setdefault("FEDSEARCH_DATA_DIR", str(DATA_DIR))  # what the loaders read


@pytest.fixture(scope="session", autouse=True)
def single_blas_thread():
    """Tiny fits are slower with a multi-threaded BLAS on a shared 2-core machine."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield


@pytest.fixture(scope="session")
def cancer():
    """Breast cancer, standardised, subsampled: small and fast, two classes."""
    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    idx = np.random.default_rng(0).permutation(len(y))[:240]
    return X[idx], y[idx]


@pytest.fixture(scope="session")
def iris():
    return load_iris(return_X_y=True)


@pytest.fixture(scope="session")
def data_dir():
    if not DATA_DIR.is_dir():
        pytest.skip(f"benchmark data not found at {DATA_DIR}")
    return DATA_DIR
