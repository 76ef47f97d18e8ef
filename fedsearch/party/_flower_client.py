"""The ClientApp of a party reached through Flower (see :mod:`fedsearch.federation.flower`).

Flower starts a fresh process for every message; it answers one task from the silo's own data,
named by the SuperNode's node config, through the same handlers as an in-process party. Between
messages the party keeps the search's set-up, its cache of evaluated configurations and the
values it released under differential privacy in the run's context state.
"""

from __future__ import annotations

import importlib
import logging
from pathlib import Path

from flwr.app import ConfigRecord, Context, Message, RecordDict
from flwr.clientapp import ClientApp

from .. import algorithms  # noqa: F401 - registers every algorithm's tasks and their handlers
from ..federation.flower import HELLO, RECORD, TASK
from ..messages import ErrorReply, SetupTask, decode, encode
from .base import log_error, logger
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
    in-process party, its cache and its differentially private releases restored from ``state``
    and saved back after the task.
    A party that cannot answer replies with an :class:`~fedsearch.messages.ErrorReply`: the
    error's kind (``"setup"`` when its data or the set-up failed, else ``"task"``) and a
    data-free text (:func:`~fedsearch.messages.public_error`); the full message goes to the
    party's own log, and crosses only when the node config says ``share_errors="true"``.
    """
    name = str(node_config["party"])
    share = str(node_config.get("share_errors", "false")).lower() == "true"
    kind = "task"
    try:
        task = decode(task_json)
        if not isinstance(task, SetupTask) and RECORD not in state:
            return encode(ErrorReply(error=f"RuntimeError: party {name!r} got a {type(task).__name__} before "
                                           f"the search's set-up", kind="setup")).decode()
        kind = "setup"
        X, y = load_party_data(node_config)
        setup = task if isinstance(task, SetupTask) else decode(state[RECORD]["setup"])
        party = Party.from_setup(name, X, y, setup, share_errors=share)
        kind = "task"
        if isinstance(task, SetupTask):
            state[RECORD] = ConfigRecord({"setup": task_json, "cache": _dump_cache({}), "released": encode({}).decode()})
            reply = party.setup_reply()
        else:
            saved = state[RECORD]
            party._cache.update(_load_cache(saved["cache"]))
            party.released.update(decode(saved["released"]))  # DP releases: a repeat is never re-noised
            reply = party.handle(task)
            saved["cache"] = _dump_cache(party._cache)
            saved["released"] = encode(party.released).decode()
        return encode(reply).decode()
    except Exception as exc:  # noqa: BLE001 - a failing party answers with an error, its message kept here
        if getattr(exc, "fedsearch_public", False):  # a fixed, data-free text (error_score="raise", skops)
            public = str(exc)
        else:
            public = log_error(name, exc, kind, "answering a task", share)
        return encode(ErrorReply(error=f"party {name!r}: {public}", kind=kind)).decode()


def _party_log() -> None:
    """In a Flower party's process, its own log is its standard error (the SuperNode's log): the
    full messages of its failures (the ``"fedsearch.party"`` logger, at INFO) go there."""
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)


@client_app.query(HELLO)
def hello(message: Message, context: Context) -> Message:
    """Tell the ServerApp which party this SuperNode is."""
    return Message(RecordDict({RECORD: ConfigRecord({"json": str(context.node_config["party"])})}),
                   reply_to=message)


@client_app.query(TASK)
def answer_message(message: Message, context: Context) -> Message:
    """Answer one task from this silo's data."""
    _party_log()
    reply = answer(str(message.content[RECORD]["json"]), context.node_config, context.state)
    return Message(RecordDict({RECORD: ConfigRecord({"json": reply})}), reply_to=message)
