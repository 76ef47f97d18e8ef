import sys

import pytest

from fedsearch._optional import import_optional


def test_missing_extra_names_the_extra(monkeypatch):
    for name in ("matplotlib", "matplotlib.pyplot"):  # an import of either now fails
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ImportError, match=r"plotting needs the optional package 'matplotlib': pip install 'fedsearch\[plot\]'"):
        import_optional("matplotlib.pyplot", "plot", "plotting")
