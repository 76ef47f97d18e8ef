"""Optional dependencies: imported when a feature needs them, with an error naming the extra."""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["import_optional"]


def import_optional(module: str, extra: str, feature: str) -> ModuleType:
    """Import ``module`` for ``feature``, or raise an ImportError that says which extra installs it.

    Examples
    --------
    >>> import_optional("math", "none", "arithmetic").sqrt(4.0)
    2.0
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{feature} needs the optional package {module.split('.')[0]!r}: "
            f"pip install 'fedsearch[{extra}]'"
        ) from exc
