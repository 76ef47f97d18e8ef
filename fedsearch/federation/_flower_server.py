"""The ServerApp of :class:`~fedsearch.federation.flower.FlowerFederation`, run by the SuperLink
(one per search): it relays each round's tasks from the search to the parties' SuperNodes and
their replies back.

Every task and reply travels as the JSON of :func:`fedsearch.messages.encode`, one string in a
``ConfigRecord``: no pickle in either direction. A party is named by its SuperNode's node config
(``party="..."``), never by its Flower node id, which changes whenever a SuperNode restarts.
"""

from __future__ import annotations

import time

from flwr.app import ConfigRecord, Context, Message, RecordDict
from flwr.serverapp import Grid, ServerApp

from ._flower_relay import connect
from .flower import HELLO, RECORD, TASK

__all__ = ["server_app"]

server_app = ServerApp()

_PULL_INTERVAL = 0.05
# Flower's error codes (flwr.common.constant.ErrorCode) as a reason a person can act on
_FLOWER_ERRORS = {
    2: "the party's ClientApp raised an exception (see that SuperNode's log)",
    5: "the party's SuperNode is unavailable (it stopped sending heartbeats)",
    8: "the party's ClientApp process crashed",
}


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
    # Flower's reason can hold the text of an exception raised at the party: it stays in the
    # SuperNode's log, and only the code's fixed description crosses
    return _FLOWER_ERRORS.get(reply.error.code, f"Flower error code {reply.error.code}")


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
