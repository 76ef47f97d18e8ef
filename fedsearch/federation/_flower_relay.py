"""The local link between a search and the Flower ServerApp that talks to its parties.

A Flower ServerApp runs in a process that the SuperLink starts, not in the user's Python. So
that the search (strategy, ``cv_results_``, final fit) stays in the user's process, the
ServerApp is a relay: it connects back to the search over this link, receives a round's tasks,
sends them to the parties through Flower and returns their replies.

The link is a TCP socket on the SuperLink's host. The ServerApp proves that it knows a secret
the search wrote to a file readable by the search's user only (HMAC-SHA256 of a fresh nonce);
the secret itself never crosses the link, nor goes into the Flower app sent to the parties. Every
frame is an 8-byte length and a JSON document: no pickle.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import socket
import struct
from pathlib import Path

__all__ = ["RelayListener", "RelayLink", "connect"]

_HEADER = struct.Struct(">Q")
_NONCE_BYTES = 32


class RelayLink:
    """One authenticated link: JSON documents in length-prefixed frames."""

    def __init__(self, sock: socket.socket):
        self._sock = sock

    def send(self, document) -> None:
        data = json.dumps(document, allow_nan=True, separators=(",", ":")).encode()
        self._sock.sendall(_HEADER.pack(len(data)) + data)

    def receive(self, timeout: float | None = None):
        """The next document; ``TimeoutError`` after ``timeout`` seconds, ``ConnectionError``
        when the other side has gone."""
        self._sock.settimeout(timeout)
        try:
            (size,) = _HEADER.unpack(self._read(_HEADER.size))
            return json.loads(self._read(size))
        except socket.timeout as exc:
            raise TimeoutError(f"no message on the relay link within {timeout} s") from exc

    def _read(self, n: int) -> bytes:
        chunks, left = [], n
        while left:
            chunk = self._sock.recv(min(left, 1 << 20))
            if not chunk:
                raise ConnectionError("the other end of the relay link closed it")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        self._sock.close()


class RelayListener:
    """The search's end: listens on ``host`` (a free port), holds the secret in ``key_file``."""

    def __init__(self, host: str, key_file: Path):
        self._key = secrets.token_bytes(32)
        key_file = Path(key_file)
        fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(self._key)
        self.key_file = key_file
        self._sock = socket.create_server((host, 0))
        self.address = self._sock.getsockname()[:2]

    def accept(self, timeout: float) -> RelayLink:
        """The first peer that proves it holds the secret; ``TimeoutError`` after ``timeout``."""
        self._sock.settimeout(timeout)
        while True:
            try:
                conn, _ = self._sock.accept()
            except socket.timeout as exc:
                raise TimeoutError(f"nothing connected to the relay within {timeout} s") from exc
            nonce = secrets.token_bytes(_NONCE_BYTES)
            link = RelayLink(conn)
            try:
                conn.sendall(nonce)
                conn.settimeout(30)
                answer = link._read(hashlib.sha256().digest_size)
            except OSError:
                conn.close()
                continue
            if hmac.compare_digest(answer, hmac.digest(self._key, nonce, "sha256")):
                return link
            conn.close()

    def close(self) -> None:
        self._sock.close()


def connect(host: str, port: int, key_file: str | Path, timeout: float = 30.0) -> RelayLink:
    """The ServerApp's end: connect to the search and answer its challenge."""
    sock = socket.create_connection((host, port), timeout=timeout)
    link = RelayLink(sock)
    nonce = link._read(_NONCE_BYTES)
    sock.sendall(hmac.digest(Path(key_file).read_bytes(), nonce, "sha256"))
    return link
