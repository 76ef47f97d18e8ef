"""The house rules, checked on the import statements of the package (AST, no import run).

- strategies import no scikit-learn, party, federation or estimator code;
- federation code imports no algorithm or estimator code;
- nothing in the package imports ``fedsearch.research`` (but research itself) or ``benchmarks``.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "fedsearch"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Absolute names of every module ``path`` imports (relative imports resolved)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


MODULES = {_module_name(p): _imports(p) for p in PACKAGE.rglob("*.py")}


def _violations(modules, forbidden, allowed=()):
    return sorted(f"{m} imports {name}" for m in modules for name in MODULES[m]
                  if any(name == f or name.startswith(f + ".") for f in forbidden)
                  and not any(name == a or name.startswith(a + ".") for a in allowed))


def test_the_checker_sees_imports():
    # a rule that cannot fail is no rule: the estimator of FLoRA does import scikit-learn
    assert _violations(["fedsearch.algorithms.flora.estimator"], ["fedsearch.searchcv"])


def test_strategies_import_no_data_side():
    strategies = [m for m in MODULES if m.endswith(".strategy") and m.startswith("fedsearch.algorithms")]
    strategies += ["fedsearch.strategy", "fedsearch.algorithms.xarmed.nodes", "fedsearch.algorithms.xarmed.tree"]
    assert len(strategies) >= 7
    # FLoRA's server fits its loss surfaces with a scikit-learn regressor: that module alone
    assert _violations(strategies, ["sklearn", "fedsearch.party", "fedsearch.federation", "fedsearch.searchcv"],
                       allowed=["fedsearch.algorithms.flora.surfaces"]) == []


def test_federation_imports_no_algorithm_or_estimator():
    federation = [m for m in MODULES if m.startswith("fedsearch.federation")]
    assert _violations(federation, ["fedsearch.algorithms", "fedsearch.searchcv"]) == []


def test_nothing_imports_research_or_benchmarks():
    outside = [m for m in MODULES if not m.startswith("fedsearch.research") and m != "fedsearch.testing"]
    assert _violations(outside, ["fedsearch.research", "benchmarks"]) == []
    assert _violations(list(MODULES), ["benchmarks"]) == []


@pytest.mark.parametrize("module", ["fedsearch.algorithms.flora.strategy", "fedsearch.algorithms.fedpne.strategy"])
def test_algorithm_folders_have_the_same_roles(module):
    folder = PACKAGE / Path(*module.split(".")[1:-1])
    assert {"strategy.py", "estimator.py", "__init__.py"} <= {p.name for p in folder.iterdir()}
