"""What every benchmark suite shares: common options, run records, CSV/JSON output, plots, tables.

A suite module has ``add_arguments(parser)`` (its own options) and ``run(args)``. The runner
(``python -m benchmarks <suite>``) has already added the common options:

- ``args.quick`` (bool): smoke-run settings, a few minutes at most on 2 cores;
- ``args.seeds`` (list of int or None): use :func:`seeds` to get the suite's default;
- ``args.output`` (Path or None): where :func:`write_runs` and the ``plot_*`` helpers write;
- ``args.data_dir`` (str): pass to :func:`fedsearch.datasets.load_benchmark`;
- ``args.n_jobs`` (int): workers of every search (2 by default);
- ``args.suite`` (str): the suite's name; ``args.command``: the command line, for the record.

A suite collects one dict per run (configuration, seed, scores, times, rounds, bytes; see
:func:`search_record`), prints them with :func:`print_table`, and hands them to
:func:`write_runs` and the plot helpers, which do nothing without ``--output``.
"""

from __future__ import annotations

import csv
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from fedsearch._optional import import_optional

__all__ = [
    "add_common_arguments",
    "seeds",
    "search_record",
    "unavailable_record",
    "pyxab_hct",
    "print_table",
    "write_runs",
    "read_runs",
    "plot_curves",
    "plot_boxes",
    "plot_bars",
]


#: the shared data directory beside this checkout (the repository's layout, known only here)
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def add_common_arguments(parser) -> None:
    """The options every suite has."""
    parser.add_argument("--quick", action="store_true",
                        help="smoke-run settings (a few minutes at most on 2 cores)")
    parser.add_argument("--seeds", type=int, nargs="+", default=None, metavar="SEED",
                        help="random seeds of the runs (default: the suite's; 0 with --quick)")
    parser.add_argument("--output", type=Path, default=None, metavar="DIR",
                        help="write every run to DIR/<suite>.csv and .json, and PNG plots "
                             "(with matplotlib: pip install fedsearch[plot])")
    parser.add_argument("--data-dir", default=os.environ.get("FEDSEARCH_DATA_DIR", str(SHARED_DATA)), metavar="DIR",
                        help="directory of the benchmark .csv.gz files (default: $FEDSEARCH_DATA_DIR, else "
                             "../shared/data beside this checkout)")
    parser.add_argument("--n-jobs", type=int, default=2, metavar="N",
                        help="workers of each search (default: 2)")


def seeds(args, n_full: int) -> list[int]:
    """``--seeds`` if given, else ``[0]`` with ``--quick``, else ``range(n_full)``."""
    if args.seeds:
        return list(args.seeds)
    return [0] if args.quick else list(range(n_full))


def _log_bytes(log: dict) -> dict:
    direction = np.asarray(log.get("direction", []))
    sizes = np.asarray(log.get("bytes", []), dtype=float)
    return {"bytes": int(sizes.sum()),
            "bytes_to_parties": int(sizes[direction == "to_party"].sum()),
            "bytes_to_server": int(sizes[direction == "to_server"].sum()),
            "messages": int(len(sizes))}


def search_record(search, **fields) -> dict:
    """One run's record from a fitted search: ``fields`` first, then what the search measured.

    Adds ``best_params``, ``best_score``, ``n_configurations`` (rows of ``cv_results_``),
    ``search_time`` (``search_time_``), ``rounds`` (``n_rounds_``) and the bytes that crossed
    the party boundary (``bytes``, ``bytes_to_parties``, ``bytes_to_server``, ``messages``,
    from ``federation_log_``). Attributes a search lacks are left out.
    """
    row = dict(fields)
    for key, attr in (("best_params", "best_params_"), ("best_score", "best_score_"),
                      ("search_time", "search_time_"), ("rounds", "n_rounds_")):
        if hasattr(search, attr):
            row[key] = getattr(search, attr)
    if hasattr(search, "cv_results_"):
        row["n_configurations"] = len(search.cv_results_["params"])
    if hasattr(search, "federation_log_"):
        row.update(_log_bytes(search.federation_log_))
    row.setdefault("status", "ok")
    return row


def unavailable_record(reason: str, **fields) -> dict:
    """The record of a run that cannot happen (yet): ``fields`` and a ``status`` saying why."""
    return {**fields, "status": f"not available yet: {reason}"}


def pyxab_hct():
    """PyXAB's HCT and binary partition (the papers' baseline), or ImportError naming the extra."""
    hct = import_optional("PyXAB.algos.HCT", "bandits", "The HCT baseline")
    partition = import_optional("PyXAB.partition.BinaryPartition", "bandits", "The HCT baseline")
    return hct.HCT, partition.BinaryPartition


# --------------------------------------------------------------------------- printing
def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, (float, np.floating)):
        if math.isnan(value):
            return "nan"
        return f"{value:.4g}" if abs(value) < 1e5 else f"{value:.3e}"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_cell(v)}" for k, v in value.items())
    return str(value)


def print_table(rows: list[dict], columns: list[str], title: str | None = None, file=None) -> None:
    """Print ``rows`` as a fixed-width text table of ``columns`` (missing cells show ``-``)."""
    file = file or sys.stdout
    cells = [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[j]) for row in cells]) for j, c in enumerate(columns)]
    if title:
        print(f"\n{title}", file=file)
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths)), file=file)
    print("  ".join("-" * w for w in widths), file=file)
    for row in cells:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)), file=file)


# --------------------------------------------------------------------------- files
def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)  # estimators, distributions: their repr is the readable record


def _environment() -> dict:
    import joblib
    import scipy
    import sklearn

    return {"python": platform.python_version(), "numpy": np.__version__, "scipy": scipy.__version__,
            "scikit-learn": sklearn.__version__, "joblib": joblib.__version__,
            "cpu_count": os.cpu_count(), "load_average": list(os.getloadavg()), "platform": platform.platform()}


def write_runs(args, rows: list[dict], name: str | None = None) -> list[Path]:
    """Write ``rows`` to ``<output>/<name>.csv`` and ``.json`` (``name`` defaults to the suite).

    The CSV has one column per key (in order of first appearance); dicts and lists are JSON
    text in their cell. The JSON also records the command line, the seeds and the versions.
    Nothing is written without ``--output``; returns the paths written.
    """
    if args.output is None:
        return []
    name = name or args.suite
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    rows = [_jsonable(r) for r in rows]
    columns = list(dict.fromkeys(k for r in rows for k in r))
    csv_path, json_path = out / f"{name}.csv", out / f"{name}.json"
    with open(csv_path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        for r in rows:
            writer.writerow({k: json.dumps(v) if isinstance(v, (dict, list)) else v for k, v in r.items()})
    meta = {"suite": args.suite, "command": getattr(args, "command", None), "quick": bool(args.quick), "seeds": args.seeds, "n_jobs": args.n_jobs,
            "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "environment": _environment(), "runs": rows}
    json_path.write_text(json.dumps(meta, indent=1))
    print(f"wrote {csv_path} and {json_path}")
    return [csv_path, json_path]


def read_runs(paths) -> list[dict]:
    """The rows of CSV files written by :func:`write_runs`, in order (e.g. one file per seed).

    A cell that holds JSON text (a dict or a list) comes back as that object; numbers come back
    as numbers and an empty cell as None, so the rows can be reported again as if just run.
    """
    rows = []
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                rows.append({k: _parse_cell(v) for k, v in row.items()})
    return rows


def _parse_cell(text: str):
    if text == "":
        return None
    if text[0] in "[{":
        return json.loads(text)
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


# --------------------------------------------------------------------------- plots
_NOTED = []


def _pyplot():
    """matplotlib's pyplot on the Agg backend, or None (with a one-time note) when absent."""
    try:
        matplotlib = import_optional("matplotlib", "plot", "PNG plots")
    except ImportError as exc:
        if not _NOTED:
            print(f"no PNG plots: {exc}")
            _NOTED.append(True)
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _figure(args):
    if args.output is None:
        return None
    return _pyplot()


def _save(plt, fig, args, name: str) -> Path:
    path = Path(args.output) / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"wrote {path}")
    return path


def plot_curves(args, name: str, curves: dict, *, xlabel: str, ylabel: str, title: str = "",
                logy: bool = False) -> Path | None:
    """Line plot, e.g. regret curves: ``curves`` maps a label to ``(x, runs)``.

    ``runs`` is one curve (1-D) or one per seed (2-D, rows): the mean is drawn with a band of
    one standard error. Writes ``<output>/<name>.png``; None without ``--output`` or matplotlib.
    """
    plt = _figure(args)
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, (x, runs) in curves.items():
        runs = np.atleast_2d(np.asarray(runs, dtype=float))
        mean = runs.mean(axis=0)
        ax.plot(x, mean, label=label)
        if len(runs) > 1:
            se = runs.std(axis=0, ddof=1) / np.sqrt(len(runs))
            ax.fill_between(x, mean - se, mean + se, alpha=0.2)
    if logy:
        ax.set_yscale("log")
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    ax.legend()
    return _save(plt, fig, args, name)


def plot_boxes(args, name: str, groups: dict, *, ylabel: str, title: str = "",
               reference: tuple | None = None) -> Path | None:
    """Box plot, e.g. relative regret per surface: ``groups`` maps a label to its values.

    ``reference=(value, label)`` draws a dashed horizontal line, e.g. the baseline's regret 1.
    """
    plt = _figure(args)
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(max(4, 1 + 0.9 * len(groups)), 4))
    values = [np.asarray(v, dtype=float)[np.isfinite(np.asarray(v, dtype=float))] for v in groups.values()]
    ax.boxplot(values)
    if reference is not None:
        ax.axhline(reference[0], color="grey", linestyle="--", linewidth=1, label=reference[1])
        ax.legend(loc="best", fontsize="small")
    ax.set_xticks(range(1, len(groups) + 1), list(groups), rotation=30, ha="right")
    ax.set(ylabel=ylabel, title=title)
    return _save(plt, fig, args, name)


def plot_bars(args, name: str, categories: list, series: dict, *, ylabel: str, title: str = "") -> Path | None:
    """Grouped bars, e.g. a time breakdown: ``series`` maps a label to one value per category."""
    plt = _figure(args)
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(categories)), 4))
    width = 0.8 / max(len(series), 1)
    x = np.arange(len(categories))
    for j, (label, values) in enumerate(series.items()):
        ax.bar(x + (j - (len(series) - 1) / 2) * width, values, width, label=label)
    ax.set_xticks(x, [str(c) for c in categories], rotation=30, ha="right")
    ax.set(ylabel=ylabel, title=title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    return _save(plt, fig, args, name)
