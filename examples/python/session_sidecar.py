"""A stdlib-only Python client for session-sidecar (JSON-RPC 2.0 over stdio).

The sidecar is a Node process that keeps AI-agent conversation sessions durable. This
module spawns it, speaks either framing (NDJSON or LSP Content-Length), matches answers to
requests on a background thread, and turns JSON-RPC errors into typed exceptions.

Usage:

    from session_sidecar import Sidecar, Conflict

    with Sidecar(store="/tmp/my-store") as sc:              # spawn + initialize
        sid = sc.create(title="demo", llm={"provider": "openai", "model": "gpt-4o"})["sessionId"]
        ack = sc.append(sid, [{"kind": "message", "message": {"role": "user", "content": "hi"}}])
        print(ack)                                          # {'firstSeq': 1, 'lastSeq': 1}
        for rec in sc.read_all(sid):
            print(rec["seq"], rec["message"]["role"], rec["message"].get("content"))
        try:
            sc.append(sid, [{"kind": "event", "type": "x", "payload": {}}], expected_last_seq=0)
        except Conflict as e:
            print("someone else wrote first:", e.data)   # shutdown + exit on leaving the block

Requires Python 3.11+ and a built sidecar (``npm run build`` produces dist/src/cli.js).
"""

from __future__ import annotations

import base64
import codecs
import itertools
import json
import os
import queue
import subprocess
import sys
import threading
from concurrent.futures import Future
from typing import Any, BinaryIO, Callable, Iterator, Mapping, Sequence

__all__ = [
    "Sidecar", "SidecarError", "SidecarExited", "error_from_response",
    "SessionNotFound", "InvalidSessionId", "Conflict", "Corrupt", "UnsafeStore", "NotWritten",
    "RolledBack", "Uncertain", "ReadOnly", "PayloadTooLarge", "UnsupportedProtocolVersion",
    "SecretRejected", "InvalidTurnTransition", "InvalidParams", "InvalidRequest", "MethodNotFound", "ServerNotInitialized", "ParseError",
    "InternalError", "RequestCancelled", "DEFAULT_CLI", "PROTOCOL_VERSION",
]

PROTOCOL_VERSION = 1
CLIENT_NAME = "session-sidecar-python"
CLIENT_VERSION = "0.1.0"
_DEFAULT: Any = object()  # "use the client's default timeout"

#: The built CLI of this repository, relative to this file (examples/python/ -> dist/src/cli.js).
DEFAULT_CLI = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "dist", "src", "cli.js"))


# --------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------

class SidecarError(Exception):
    """A JSON-RPC error answered by the sidecar.

    ``code`` and ``message`` are the JSON-RPC error's; ``data`` is its ``data`` member (or
    None); ``kind`` is ``data["kind"]`` when the server gave one. The subclass raised is
    selected by ``kind`` (then by ``code``), so ``except Conflict:`` works.
    """

    def __init__(self, code: int | None, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.kind: str | None = data.get("kind") if isinstance(data, dict) and isinstance(data.get("kind"), str) else None

    def __str__(self) -> str:
        return self.message if self.code is None else f"{self.message} (code {self.code})"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r}, data={self.data!r})"


class SidecarExited(SidecarError):
    """The sidecar process ended (or its output became unreadable) before answering."""

    def __init__(self, message: str, returncode: int | None = None) -> None:
        super().__init__(None, message, None)
        self.returncode = returncode


# Domain errors (data.kind; codes -31001..-31011).
class SessionNotFound(SidecarError):
    """No session with that id in the store."""


class InvalidSessionId(SidecarError):
    """The session id is not 1-128 chars of [A-Za-z0-9._-] (no "..", no leading ".")."""


class Conflict(SidecarError):
    """expectedLastSeq did not match, or the session is opened for writing elsewhere."""


class Corrupt(SidecarError):
    """The session's files are damaged beyond automatic recovery."""


class UnsafeStore(SidecarError):
    """The store directory is not safe to use (permissions, symlinks, ...)."""


class NotWritten(SidecarError):
    """The append was definitely not written; it is safe to retry."""


class RolledBack(SidecarError):
    """The append was written partly and rolled back; nothing of it is stored."""


class Uncertain(SidecarError):
    """The append may or may not be stored; re-open and read to find out."""


class ReadOnly(SidecarError):
    """The session is open read-only in this connection (or not open for writing)."""


class PayloadTooLarge(SidecarError):
    """The message or record is larger than the server accepts."""


class UnsupportedProtocolVersion(SidecarError):
    """initialize asked for a protocol version the server does not speak."""


class SecretRejected(SidecarError):
    """A record (or header) holds a registered secret; nothing was written. data: path, rule."""


class InvalidTurnTransition(SidecarError):
    """The turn transition is not allowed now; data["turn"] is the current turn state."""


# JSON-RPC / LSP errors.
class InvalidParams(SidecarError):
    """-32602: params failed validation; ``issues`` lists [{path, message}]."""

    @property
    def issues(self) -> list[dict[str, str]]:
        return list(self.data.get("issues", [])) if isinstance(self.data, dict) else []


class ParseError(SidecarError):
    """-32700."""


class InvalidRequest(SidecarError):
    """-32600."""


class MethodNotFound(SidecarError):
    """-32601."""


class InternalError(SidecarError):
    """-32603."""


class ServerNotInitialized(SidecarError):
    """-32002: a request before initialize."""


class RequestCancelled(SidecarError):
    """-32800."""


ERRORS_BY_KIND: dict[str, type[SidecarError]] = {
    cls.__name__: cls
    for cls in (
        SessionNotFound, InvalidSessionId, Conflict, Corrupt, UnsafeStore, NotWritten, RolledBack,
        Uncertain, ReadOnly, PayloadTooLarge, UnsupportedProtocolVersion, SecretRejected,
        InvalidTurnTransition, InvalidParams,
    )
}

ERRORS_BY_CODE: dict[int, type[SidecarError]] = {
    -31001: SessionNotFound, -31002: InvalidSessionId, -31003: Conflict, -31004: Corrupt,
    -31005: UnsafeStore, -31006: NotWritten, -31007: RolledBack, -31008: Uncertain,
    -31009: ReadOnly, -31010: PayloadTooLarge, -31011: UnsupportedProtocolVersion,
    -31012: SecretRejected, -31013: InvalidTurnTransition,
    -32700: ParseError, -32600: InvalidRequest, -32601: MethodNotFound, -32602: InvalidParams,
    -32603: InternalError, -32002: ServerNotInitialized, -32800: RequestCancelled,
}


def error_from_response(error: Mapping[str, Any]) -> SidecarError:
    """Maps a JSON-RPC error object ``{code, message, data?}`` to the matching exception.

    The class is chosen by ``data.kind`` first, then by ``code``; an unknown kind with an
    unknown code gives a plain SidecarError.
    """
    if not isinstance(error, Mapping):
        return SidecarError(None, f"malformed error object: {error!r}", None)
    code = error.get("code")
    message = error.get("message")
    if not isinstance(message, str):
        message = "(no message)"
    data = error.get("data")
    kind = data.get("kind") if isinstance(data, dict) else None
    cls = ERRORS_BY_KIND.get(kind) if isinstance(kind, str) else None
    if cls is None and isinstance(kind, str):
        cls = SidecarError  # a kind this client does not know: do not guess from the code
    if cls is None:
        cls = ERRORS_BY_CODE.get(code, SidecarError) if isinstance(code, int) else SidecarError
    return cls(code if isinstance(code, int) else None, message, data)


# --------------------------------------------------------------------------------------
# Framing
# --------------------------------------------------------------------------------------

def _encode(message: Any, framing: str) -> bytes:
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    if framing == "ndjson":
        return body + b"\n"
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read_frames(stream: BinaryIO, framing: str) -> Iterator[bytes]:
    """Yields message bodies until EOF. Raises ValueError on a malformed LSP header."""
    if framing == "ndjson":
        for line in stream:
            line = line.strip()
            if line:
                yield line
        return
    while True:
        length: int | None = None
        while True:
            header = stream.readline()
            if not header:
                if length is None:
                    return  # clean EOF between messages
                raise ValueError("EOF inside an LSP header")
            header = header.rstrip(b"\r\n")
            if not header:
                if length is None:
                    continue  # tolerate stray blank lines between frames
                break
            name, sep, value = header.partition(b":")
            if not sep:
                raise ValueError(f"malformed LSP header line: {header[:80]!r}")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        body = stream.read(length)
        if len(body) < length:
            raise ValueError("EOF inside an LSP body")
        yield body


# --------------------------------------------------------------------------------------
# The client
# --------------------------------------------------------------------------------------

class Sidecar:
    """A spawned session-sidecar process and a JSON-RPC connection to it.

    Use it as a context manager: entering spawns the process and runs initialize /
    initialized; leaving sends shutdown and exit and waits for the process (killing it
    after ``exit_timeout`` seconds). ``start()`` and ``stop()`` do the same by hand.

    Args:
        store: the store directory, passed as ``--store`` (None: the sidecar's default).
        args: extra command-line arguments for the sidecar.
        command: executable and leading arguments; default ``["node", DEFAULT_CLI]``.
        framing: ``"ndjson"`` (one JSON message per line) or ``"lsp"`` (Content-Length).
        stderr: where the sidecar's stderr goes: None (default) passes it through to this
            process's stderr; ``subprocess.DEVNULL``, a file object or a file descriptor
            are given to ``subprocess.Popen``; ``"capture"`` keeps it in ``stderr_text``.
        on_notification: called on the reader thread as ``fn(method, params)`` for every
            notification; notifications are also put on the ``notifications`` queue.
        timeout: default seconds to wait for an answer in ``request`` (None: forever).
        exit_timeout: seconds to wait for the process to end on ``stop``.
        client_name / client_version: sent in initialize's clientInfo.
        env / cwd: for the child process.
    """

    def __init__(
        self,
        store: str | os.PathLike[str] | None = None,
        args: Sequence[str] = (),
        *,
        command: Sequence[str] | None = None,
        framing: str = "ndjson",
        stderr: Any = None,
        on_notification: Callable[[str, Any], None] | None = None,
        timeout: float | None = 30.0,
        exit_timeout: float = 10.0,
        client_name: str = CLIENT_NAME,
        client_version: str = CLIENT_VERSION,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
    ) -> None:
        if framing not in ("ndjson", "lsp"):
            raise ValueError("framing must be 'ndjson' or 'lsp'")
        self.store = os.fspath(store) if store is not None else None
        self.args = list(args)
        self.command = list(command) if command is not None else ["node", DEFAULT_CLI]
        self.framing = framing
        self.timeout = timeout
        self.exit_timeout = exit_timeout
        self.client_name = client_name
        self.client_version = client_version
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.on_notification = on_notification
        self.notifications: queue.Queue[tuple[str, Any]] = queue.Queue()
        #: Answers whose id matched no request (e.g. a parse error answered with id null).
        self.unmatched: list[dict[str, Any]] = []
        #: The initialize result, once started.
        self.server_info: dict[str, Any] | None = None
        self.stderr_text = ""
        self._stderr = stderr
        self.proc: subprocess.Popen[bytes] | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, Future[Any]] = {}
        self._lock = threading.Lock()        # guards _pending and _closed_reason
        self._write_lock = threading.Lock()  # one frame at a time on stdin
        self._closed_reason: str | None = None
        self._threads: list[threading.Thread] = []

    # -- lifecycle ----------------------------------------------------------------------

    def spawn(self) -> "Sidecar":
        """Starts the process and the reader thread (no initialize)."""
        if self.proc is not None:
            raise RuntimeError("this Sidecar was already started")
        if self.command[-1:] == [DEFAULT_CLI] and not os.path.exists(DEFAULT_CLI):
            raise FileNotFoundError(f"{DEFAULT_CLI} does not exist: run `npm run build` first")
        argv = [*self.command, *self.args, *(["--store", self.store] if self.store is not None else [])]
        stderr_target = subprocess.PIPE if self._stderr == "capture" else self._stderr
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr_target,
            env=self.env, cwd=self.cwd,
        )
        self._start_thread(self._read_loop, "sidecar-stdout")
        if self._stderr == "capture":
            self._start_thread(self._stderr_loop, "sidecar-stderr")
        return self

    def start(self) -> dict[str, Any]:
        """Spawns the process, sends initialize and the initialized notification."""
        self.spawn()
        try:
            self.server_info = self.request("initialize", {
                "protocolVersion": PROTOCOL_VERSION,
                "clientInfo": {"name": self.client_name, "version": self.client_version},
                "processId": os.getpid(),
            })
            self.notify("initialized", {})
        except BaseException:
            self.kill()
            raise
        return self.server_info

    def stop(self, timeout: float | None = None) -> int | None:
        """shutdown, exit, and wait for the process; kills it if it does not end in time.

        Returns the exit code (negative: ended by that signal). Safe to call twice and after
        ``kill()``.
        """
        if self.proc is None:
            return None
        timeout = self.exit_timeout if timeout is None else timeout
        exit_sent = False
        if self.proc.poll() is None and self._closed_reason is None:
            try:
                self.request("shutdown", None, timeout=timeout)
                self.notify("exit")
                exit_sent = True
            except (SidecarError, TimeoutError, OSError):
                pass  # ended already, or not answering: EOF and then SIGKILL below
        try:
            if exit_sent:
                try:
                    self.proc.wait(timeout=timeout)  # `exit` ends it; EOF is the fallback
                except subprocess.TimeoutExpired:
                    pass
            self._close_stdin()
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._close_stdin()
        self._join()
        return self.proc.returncode

    def kill(self) -> int | None:
        """Ends the sidecar at once with SIGKILL (no shutdown): a crash, for demos and tests."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.kill()  # SIGKILL on POSIX
        self.proc.wait()
        self._close_stdin()
        self._join()
        return self.proc.returncode

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    @property
    def returncode(self) -> int | None:
        return self.proc.poll() if self.proc is not None else None

    def __enter__(self) -> "Sidecar":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- JSON-RPC -----------------------------------------------------------------------

    def request_async(self, method: str, params: Any = None) -> Future[Any]:
        """Sends a request; returns a ``concurrent.futures.Future`` of its result.

        ``future.result(timeout)`` returns the result or raises the typed SidecarError.
        Several requests may be in flight at once; the sidecar may answer out of order.
        """
        msg_id = next(self._ids)
        fut: Future[Any] = Future()
        fut.request_id = msg_id  # type: ignore[attr-defined]
        with self._lock:
            if self._closed_reason is not None:
                fut.set_exception(SidecarExited(self._closed_reason, self.returncode))
                return fut
            self._pending[msg_id] = fut
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            self._send(message)
        except OSError as e:
            with self._lock:
                self._pending.pop(msg_id, None)
            if not fut.done():
                fut.set_exception(SidecarExited(f"cannot write to the sidecar: {e}", self.returncode))
        return fut

    def request(self, method: str, params: Any = None, *, timeout: Any = _DEFAULT) -> Any:
        """Sends a request and waits for its result (raises a typed SidecarError).

        ``timeout`` defaults to the client's; on timeout the request is cancelled with
        ``$/cancelRequest`` and TimeoutError is raised.
        """
        fut = self.request_async(method, params)
        wait = self.timeout if timeout is _DEFAULT else timeout
        try:
            return fut.result(wait)
        except TimeoutError:
            self.cancel(fut)
            raise TimeoutError(f"no answer to {method} within {wait}s") from None

    def cancel(self, fut: Future[Any]) -> None:
        """Asks the sidecar to cancel a pending request (``$/cancelRequest``)."""
        msg_id = getattr(fut, "request_id", None)
        if msg_id is None or fut.done():
            return
        try:
            self.notify("$/cancelRequest", {"id": msg_id})
        except OSError:
            pass

    def notify(self, method: str, params: Any = None) -> None:
        """Sends a notification (no answer)."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    # -- typed convenience methods ------------------------------------------------------

    def create(self, **params: Any) -> dict[str, Any]:
        """session/create {cwd?, title?, systemPrompt?, llm?, metadata?} -> {sessionId, createdAt}.

        The new session is also open for writing on this connection.
        """
        return self.request("session/create", params)

    def open(self, session_id: str | None = None, mode: str = "write", *, path: str | None = None) -> dict[str, Any]:
        """session/open -> {sessionId, mode, createdAt, ..., lastSeq, recovered?}.

        Open (mode "write") before appending to a session this process did not create.
        ``path`` (instead of the id) resumes by path: a session directory or journal in the store.
        """
        target = {"path": path} if path is not None else {"sessionId": session_id}
        return self.request("session/open", {**target, "mode": mode})

    def append(self, session_id: str, records: Sequence[Mapping[str, Any]], expected_last_seq: int | None = None) -> dict[str, Any]:
        """session/append -> {firstSeq, lastSeq}; the records are durable once this returns.

        With ``expected_last_seq`` the append happens only if the session's lastSeq is that
        value (else Conflict).
        """
        params: dict[str, Any] = {"sessionId": session_id, "records": [dict(r) for r in records]}
        if expected_last_seq is not None:
            params["expectedLastSeq"] = expected_last_seq
        return self.request("session/append", params)

    def read(self, session_id: str, after_seq: int | None = None, limit: int | None = None,
             kinds: Sequence[str] | None = None, inline: bool = False) -> dict[str, Any]:
        """session/read -> {records: [{seq, ts, ...}], lastSeq, nextAfterSeq (None at the end)}.

        ``inline=True`` replaces blob references ({"$blob": ...}) by the strings they stand for.
        """
        params: dict[str, Any] = {"sessionId": session_id}
        if inline:
            params["inline"] = True
        if after_seq is not None:
            params["afterSeq"] = after_seq
        if limit is not None:
            params["limit"] = limit
        if kinds is not None:
            params["kinds"] = list(kinds)
        return self.request("session/read", params)

    def iter_records(self, session_id: str, after_seq: int | None = None, limit: int | None = None,
                     kinds: Sequence[str] | None = None) -> Iterator[dict[str, Any]]:
        """Every record after ``after_seq``, page by page (``limit`` is the page size)."""
        cursor = after_seq
        while True:
            page = self.read(session_id, after_seq=cursor, limit=limit, kinds=kinds)
            yield from page["records"]
            cursor = page.get("nextAfterSeq")
            if cursor is None:
                return

    def read_all(self, session_id: str, kinds: Sequence[str] | None = None, page_size: int | None = None) -> list[dict[str, Any]]:
        """All records of a session, following nextAfterSeq until it is null."""
        return [*self.iter_records(session_id, limit=page_size, kinds=kinds)]

    def list(self, limit: int | None = None, cursor: str | None = None) -> dict[str, Any]:
        """session/list -> {sessions: [...], nextCursor?}."""
        params: dict[str, Any] = {}
        if limit is not None:
            params["limit"] = limit
        if cursor is not None:
            params["cursor"] = cursor
        return self.request("session/list", params)

    def close(self, session_id: str) -> dict[str, Any]:
        """session/close: releases the session in this connection."""
        return self.request("session/close", {"sessionId": session_id})

    def context(self, session_id: str, prune: Mapping[str, int] | None = None) -> dict[str, Any]:
        """session/context: {messages, turn} to send to the provider on resume."""
        params: dict[str, Any] = {"sessionId": session_id}
        if prune is not None:
            params["prune"] = dict(prune)
        return self.request("session/context", params)

    def compact(self, session_id: str, summary: str, through_seq: int, **extra: Any) -> dict[str, Any]:
        """session/compact: replace records up to through_seq by a summary checkpoint."""
        return self.request("session/compact", {"sessionId": session_id, "summary": summary, "throughSeq": through_seq, **extra})

    def history(self, session_id: str) -> dict[str, Any]:
        """session/history: the archived generations."""
        return self.request("session/history", {"sessionId": session_id})

    def turn(self, method: str, session_id: str, **params: Any) -> Any:
        """turn/start, turn/setPhase, ...: e.g. sc.turn("start", sid, kind="user")."""
        return self.request(f"turn/{method}", {"sessionId": session_id, **params})

    # -- agent runtime: tool scratch directories, state values, blobs ---------------------

    def allocate_scratch(self, session_id: str, request_id: str, keep_scratch: str | None = None) -> dict[str, Any]:
        """tool/allocateScratch -> {toolSeq, dir, tmpDir}: pass toolSeq in the tool's toolStart record."""
        params: dict[str, Any] = {"sessionId": session_id, "requestId": request_id}
        if keep_scratch is not None:
            params["keepScratch"] = keep_scratch
        return self.request("tool/allocateScratch", params)

    def set_state(self, session_id: str, key: str, value: Any) -> dict[str, Any]:
        """state/set: replace a small named value (string or JSON) atomically and durably."""
        return self.request("state/set", {"sessionId": session_id, "key": key, "value": value})

    def get_state(self, session_id: str, key: str) -> Any:
        """state/get: the value, or None when the key has none."""
        return self.request("state/get", {"sessionId": session_id, "key": key})["value"]

    def delete_state(self, session_id: str, key: str) -> bool:
        """state/delete: True when a value was removed."""
        return self.request("state/delete", {"sessionId": session_id, "key": key})["deleted"]

    def read_blob(self, session_id: str, ref: str | Mapping[str, Any], chunk: int = 1 << 20) -> bytes:
        """The bytes of a blob (a BlobRef or its "sha256:..." string), fetched with blob/get in chunks."""
        ref_id = ref["$blob"] if isinstance(ref, Mapping) else ref
        parts: list[bytes] = []
        offset = 0
        while True:
            r = self.request("blob/get", {"sessionId": session_id, "ref": ref_id, "offset": offset, "length": chunk})
            data = base64.b64decode(r["dataBase64"])
            parts.append(data)
            offset += len(data)
            if r["eof"]:
                return b"".join(parts)

    # -- internals ----------------------------------------------------------------------

    def _start_thread(self, target: Callable[[], None], name: str) -> None:
        t = threading.Thread(target=target, name=name, daemon=True)
        t.start()
        self._threads.append(t)

    def _join(self) -> None:
        for t in self._threads:
            if t is not threading.current_thread():
                t.join(timeout=5)

    def _send(self, message: Any) -> None:
        if self.proc is None or self.proc.stdin is None:
            raise SidecarExited("the sidecar was not started")
        data = _encode(message, self.framing)
        with self._write_lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def _close_stdin(self) -> None:
        if self.proc is not None and self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass

    def _read_loop(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        reason = "the sidecar closed its output"
        try:
            for body in _read_frames(self.proc.stdout, self.framing):
                try:
                    message = json.loads(body)
                except ValueError:
                    reason = f"unreadable JSON from the sidecar: {body[:120]!r}"
                    break
                self._dispatch(message)
        except (ValueError, OSError) as e:
            reason = f"unreadable output from the sidecar: {e}"
        finally:
            try:
                self.proc.stdout.close()
            except OSError:
                pass
        rc = self.proc.poll()
        if rc is None:
            try:
                rc = self.proc.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                rc = None
        if rc is not None:
            reason = f"{reason} (exit code {rc})" if rc >= 0 else f"{reason} (killed by signal {-rc})"
        self._fail_all(reason, rc)

    def _stderr_loop(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        stream = self.proc.stderr
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        with stream:
            for chunk in iter(lambda: stream.read1(4096), b""):
                self.stderr_text += decoder.decode(chunk)
        self.stderr_text += decoder.decode(b"", final=True)

    def _dispatch(self, message: Any) -> None:
        if not isinstance(message, dict):
            self.unmatched.append({"raw": message})
            return
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:  # a request from the server: this client serves none
                try:
                    self._send({"jsonrpc": "2.0", "id": message["id"],
                                "error": {"code": -32601, "message": f"client does not handle {method}"}})
                except OSError:
                    pass
                return
            params = message.get("params")
            self.notifications.put((method, params))
            if self.on_notification is not None:
                try:
                    self.on_notification(method, params)
                except Exception as e:  # a callback bug must not kill the reader
                    print(f"session_sidecar: on_notification raised {e!r}", file=sys.stderr)
            return
        msg_id = message.get("id")
        with self._lock:
            fut = self._pending.pop(msg_id, None) if isinstance(msg_id, int) else None
        if fut is None:
            self.unmatched.append(message)
            return
        if "error" in message:
            fut.set_exception(error_from_response(message["error"]))
        else:
            fut.set_result(message.get("result"))

    def _fail_all(self, reason: str, returncode: int | None) -> None:
        with self._lock:
            self._closed_reason = reason
            pending, self._pending = self._pending, {}
        for fut in pending.values():
            if not fut.done():
                fut.set_exception(SidecarExited(reason, returncode))
