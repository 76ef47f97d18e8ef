"""The Flower apps behind :class:`~fedsearch.federation.flower.FlowerFederation`.

``server_app`` runs at the SuperLink (one per search): it relays each round's tasks from the
search to the parties' SuperNodes and their replies back. ``client_app`` runs at every silo
(Flower starts a fresh process for every message): it answers one task from the silo's own data.

Every task and reply travels as the JSON of :func:`fedsearch.messages.encode`, one string in a
``ConfigRecord``: no pickle in either direction. A party is named by its SuperNode's node config
(``party="..."``), never by its Flower node id, which changes whenever a SuperNode restarts.
Between messages a party keeps the search's set-up and its cache of evaluated configurations in
the run's context state.
"""

from __future__ import annotations

import importlib
import json
import time
from pathlib import Path

from flwr.app import ConfigRecord, Context, Message, RecordDict
from flwr.clientapp import ClientApp
from flwr.serverapp import Grid, ServerApp

import fedsearch  # noqa: F401 - registers every algorithm's tasks and party handlers

from ..messages import ErrorReply, SetupTask, _from_json, _to_json, decode, encode
from ..party import Party
from ._flower_relay import connect

__all__ = ["server_app", "client_app", "answer", "load_party_data"]

server_app = ServerApp()
client_app = ClientApp()

RECORD = "fedsearch"
HELLO, TASK = "fedsearch_hello", "fedsearch"
_PULL_INTERVAL = 0.05
# Flower's error codes (flwr.common.constant.ErrorCode) as a reason a person can act on
_FLOWER_ERRORS = {
    2: "the party's ClientApp raised an exception (see that SuperNode's log)",
    5: "the party's SuperNode is unavailable (it stopped sending heartbeats)",
    8: "the party's ClientApp process crashed",
}


# ------------------------------------------------------------------------------- server side
def _exchange(grid: Grid, action: str, payloads: dict[int, str], timeout: float) -> dict[int, Message]:
    """Send ``payloads`` ({node id: JSON}) and collect the replies that come within ``timeout``."""
    messages = [grid.create_message(RecordDict({RECORD: ConfigRecord({"json": payload})}),
                                    f"query.{action}", node, group_id=action)
                for node, payload in payloads.items()]
    ids = list(grid.push_messages(messages))
    if len(ids) != len(messages):  # e.g. a payload too large for the SuperLink: nothing to wait for
        return {}
    node_of = dict(zip(ids, payloads))
    replies: dict[int, Message] = {}
    deadline = time.monotonic() + timeout
    while len(replies) < len(ids) and time.monotonic() < deadline:
        for reply in grid.pull_messages([i for i in ids if node_of[i] not in replies]):
            replies[node_of[reply.metadata.reply_to_message_id]] = reply
        time.sleep(_PULL_INTERVAL)
    return replies


def _discover(grid: Grid, nodes: dict[str, int], wanted, timeout: float) -> list[str]:
    """Update ``nodes`` ({party name: node id}) until every party of ``wanted`` is connected or
    ``timeout`` passed, asking new nodes for their names only while a party is missing; return
    the missing parties."""
    deadline = time.monotonic() + timeout
    while True:
        # a node registered with SuperNode authentication has a name, and speaks for that party only
        registered = {info.node_id: info.name for info in grid.get_nodes()}
        for name in [n for n, node in nodes.items() if node not in registered]:
            del nodes[name]
        unknown = set(registered) - set(nodes.values())
        if unknown and any(name not in nodes for name in wanted):
            answers = _exchange(grid, HELLO, {node: "{}" for node in unknown}, max(deadline - time.monotonic(), 30.0))
            for node, reply in answers.items():
                name = None if reply.has_error() else str(reply.content[RECORD]["json"])
                if name is not None and registered[node] in ("", name):
                    nodes[name] = node
        missing = [name for name in wanted if name not in nodes]
        if not missing or time.monotonic() >= deadline:
            return missing
        time.sleep(1.0)


def _failure(reply: Message | None, timeout: float) -> str:
    if reply is None:
        return (f"no reply within the timeout of {timeout} s (or the SuperLink refused the round's "
                f"messages: see its log)")
    what = _FLOWER_ERRORS.get(reply.error.code, f"Flower error code {reply.error.code}")
    return f"{what}: {reply.error.reason}"


@server_app.main()
def relay(grid: Grid, context: Context) -> None:
    """Serve the search that started this run until it closes the link."""
    config = context.run_config
    link = connect(str(config["relay-host"]), int(config["relay-port"]), str(config["relay-key"]))
    nodes: dict[str, int] = {}
    try:
        while True:
            try:
                request = link.receive()
            except ConnectionError:
                return  # the search has gone: end the run
            if request["op"] == "close":
                return
            if request["op"] == "connect":
                link.send({"missing": _discover(grid, nodes, request["parties"], request["timeout"])})
                continue
            tasks, timeout = request["tasks"], request["timeout"]
            absent = _discover(grid, nodes, tasks, 0.0)
            sent = {nodes[p]: task for p, task in tasks.items() if p not in absent}
            answers = _exchange(grid, TASK, sent, timeout)
            replies = {}
            for party, task in tasks.items():
                reply = answers.get(nodes.get(party))
                if party in absent:
                    replies[party] = {"failed": "the party is not connected to the SuperLink"}
                elif reply is not None and not reply.has_error():
                    replies[party] = {"reply": str(reply.content[RECORD]["json"])}
                else:
                    replies[party] = {"failed": _failure(reply, timeout)}
            link.send({"replies": replies})
    finally:
        link.close()


# -------------------------------------------------------------------------------- party side
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
    return json.dumps(_to_json(kept, strict=True), allow_nan=True, separators=(",", ":"))


def _load_cache(text: str) -> dict:
    return _from_json(json.loads(text))


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
