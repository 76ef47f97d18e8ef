"""Datasets for simulating a federation: benchmark files, OpenML, and party splitters."""

from .loaders import DATA_DIR_ENV, default_data_dir, fetch_openml_parties, list_benchmarks, load_benchmark
from .splitters import (
    SPLITTERS, assign_parties, split_by_column, split_disjoint_labels, split_iid, split_label_skew,
    split_parity_skew, split_quantity_skew,
)

__all__ = ["DATA_DIR_ENV", "SPLITTERS", "assign_parties", "default_data_dir", "fetch_openml_parties",
           "list_benchmarks", "load_benchmark", "split_by_column", "split_disjoint_labels", "split_iid",
           "split_label_skew", "split_parity_skew", "split_quantity_skew"]
