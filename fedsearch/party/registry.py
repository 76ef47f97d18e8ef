"""Task handlers, keyed by the type of the task.

A handler is a pair of functions: ``units(party, task) -> list[Unit]`` splits the task into
independent pieces of work (validating it first), ``reply(party, task, outputs) -> Reply``
assembles the reply from their outputs, in order. Handlers speak to a party only through the
:class:`~fedsearch.party.objective.LocalObjective` protocol, so data parties and synthetic
parties answer the same tasks. An algorithm registers its tasks' handlers in its own
``party.py``, which its package imports: the registry is filled whenever the algorithm is
imported, in the server, in a worker and in a remote party alike.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from ..messages import Task

__all__ = ["Unit", "register_handler", "handler_for", "run_unit"]


@dataclass(frozen=True)
class Unit:
    """One independent piece of party-side work: ``func(*args)``, picklable.

    ``task_name`` names it for progress callbacks; a unit with ``subtasks > 0`` reports that
    many steps of its own: ``func`` is then called with ``progress=`` (or None).
    """

    func: Callable
    args: tuple
    task_name: str = "fit"
    subtasks: int = 0


_HANDLERS: dict[type, tuple[Callable, Callable]] = {}


def register_handler(task_type: type, units: Callable, reply: Callable) -> None:
    """Teach every party to answer tasks of ``task_type`` (and of its subclasses)."""
    _HANDLERS[task_type] = (units, reply)


def handler_for(task: Task) -> tuple[Callable, Callable]:
    """The ``(units, reply)`` pair registered for the type of ``task``."""
    for cls in type(task).__mro__:
        if cls in _HANDLERS:
            return _HANDLERS[cls]
    raise TypeError(f"No party handler is registered for a task of type {type(task).__name__}; "
                    f"import the algorithm that defines it.")


def run_unit(unit: Unit, progress=None):
    """Run one unit (in a worker), timing it; ``progress`` (its callbacks' task) is begun and
    ended around it."""
    t0 = time.perf_counter()
    if progress is not None:
        progress.begin()
    out = unit.func(*unit.args, progress=progress) if unit.subtasks else unit.func(*unit.args)
    if progress is not None:
        progress.end()
    return out, time.perf_counter() - t0
