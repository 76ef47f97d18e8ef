"""The ClientApp of a party reached through Flower (see :mod:`fedsearch.federation.flower`).

Flower starts a fresh process for every message; it answers one task from the silo's own data,
named by the SuperNode's node config, through the same handlers as an in-process party. Between
messages the party keeps the search's set-up and its cache of evaluated configurations in the
run's context state.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from flwr.app import ConfigRecord, Context, Message, RecordDict
from flwr.clientapp import ClientApp

from .. import algorithms  # noqa: F401 - registers every algorithm's tasks and their handlers
from ..federation.flower import HELLO, RECORD, TASK
from ..messages import ErrorReply, SetupTask, decode, encode
from .data import Party

__all__ = ["client_app", "answer", "load_party_data"]

client_app = ClientApp()


def load_party_data(node_config) -> tuple:
    """The silo's ``X, y`` from its node config: ``data`` (a CSV or parquet file) and ``target``
    (the label column), or ``loader`` (``"module:function"``, a callable returning ``X, y``)."""
    if "loader" in node_config:
        module, _, name = str(node_config["loader"]).partition(":")
        func = importlib.import_module(module)
        for part in name.split("."):
            func = getattr(func, part)
        X, y = func()
        return X, y
    if "data" not in node_config or "target" not in node_config:
        raise ValueError("A party's node config needs either loader=\"module:function\" or "
                         "data=\"path.csv\" and target=\"column\".")
    import pandas as pd

    path = Path(str(node_config["data"]))
    frame = pd.read_parquet(path) if path.suffix in (".parquet", ".pq") else pd.read_csv(path)
    target = str(node_config["target"])
    if target not in frame.columns:
        raise ValueError(f"{path} has no column {target!r}; its columns are {list(frame.columns)}.")
    return frame.drop(columns=[target]), frame[target]


def _dump_cache(cache: dict) -> str:
    """A party's cache as JSON (a failure's exception object stays behind, its message kept)."""
    kept = {key: {k: v for k, v in summary.items() if k != "exception"} for key, summary in cache.items()}
    return encode(kept).decode()


def _load_cache(text: str) -> dict:
    return decode(text)


def answer(task_json: str, node_config, state: RecordDict) -> str:
    """The reply (JSON) of the party named in ``node_config`` to ``task_json``.

    A :class:`~fedsearch.messages.SetupTask` is kept in ``state``; every later task is answered
    by the party built from the silo's data and that set-up, through the same handlers as an
    in-process party, its cache restored from ``state`` and saved back after the task.
    A party that cannot answer replies with an :class:`~fedsearch.messages.ErrorReply`.
    """
    name = str(node_config["party"])
    try:
        task = decode(task_json)
        X, y = load_party_data(node_config)
        if isinstance(task, SetupTask):
            party = Party.from_setup(name, X, y, task)
            state[RECORD] = ConfigRecord({"setup": task_json, "cache": _dump_cache({})})
            reply = party.setup_reply()
        else:
            if RECORD not in state:
                raise RuntimeError(f"Party {name!r} got a {type(task).__name__} before the search's set-up.")
            saved = state[RECORD]
            party = Party.from_setup(name, X, y, decode(saved["setup"]))
            party._cache.update(_load_cache(saved["cache"]))
            reply = party.handle(task)
            saved["cache"] = _dump_cache(party._cache)
        return encode(reply).decode()
    except Exception as exc:  # noqa: BLE001 - a failing party answers with an error
        return encode(ErrorReply(error=f"party {name!r}: {exc}", kind=type(exc).__name__)).decode()


@client_app.query(HELLO)
def hello(message: Message, context: Context) -> Message:
    """Tell the ServerApp which party this SuperNode is."""
    return Message(RecordDict({RECORD: ConfigRecord({"json": str(context.node_config["party"])})}),
                   reply_to=message)


@client_app.query(TASK)
def answer_message(message: Message, context: Context) -> Message:
    """Answer one task from this silo's data."""
    reply = answer(str(message.content[RECORD]["json"]), context.node_config, context.state)
    return Message(RecordDict({RECORD: ConfigRecord({"json": reply})}), reply_to=message)
