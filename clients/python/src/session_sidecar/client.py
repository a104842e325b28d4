"""The thread-based client: ``Sidecar`` spawns session-sidecar and talks JSON-RPC 2.0 to it.

Answers are matched to requests on a background reader thread, so several requests may be in
flight (``request_async`` returns a ``concurrent.futures.Future``). JSON-RPC errors become the
typed exceptions of ``session_sidecar.errors``. For asyncio, use ``AsyncSidecar``.
"""

from __future__ import annotations

import base64
import codecs
import io
import itertools
import json
import os
import queue
import subprocess
import sys
import threading
from concurrent.futures import Future
from typing import Any, BinaryIO, Callable, Iterator, Mapping, Sequence, cast

from . import params as P
from .command import resolve_command
from .errors import SidecarError, SidecarExited, error_from_response
from .framing import check_framing, encode, read_frames

PROTOCOL_VERSION = 1
CLIENT_NAME = "session-sidecar-python"
CLIENT_VERSION = "0.1.0"
_DEFAULT: Any = object()  # "use the client's default timeout"


class Sidecar:
    """A spawned session-sidecar process and a JSON-RPC connection to it.

    Use it as a context manager: entering spawns the process and runs initialize /
    initialized; leaving sends shutdown and exit and waits for the process (killing it
    after ``exit_timeout`` seconds). ``start()`` and ``stop()`` do the same by hand.

    Args:
        store: the store directory, passed as ``--store`` (None: the sidecar's default).
        args: extra command-line arguments for the sidecar.
        command: the sidecar's executable and leading arguments, a list or one command line;
            default: $SESSION_SIDECAR_COMMAND, else ``session-sidecar`` on PATH
            (``resolve_command``; SidecarNotFound when there is none).
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
        command: str | Sequence[str] | None = None,
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
        self.store = os.fspath(store) if store is not None else None
        self.args = list(args)
        self.command = resolve_command(command)
        self.framing = check_framing(framing)
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
    def capabilities(self) -> dict[str, Any]:
        """The server's capabilities from initialize (empty before start)."""
        return dict((self.server_info or {}).get("capabilities") or {})

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
        except (TypeError, ValueError):  # not JSON-serializable: nothing was sent
            with self._lock:
                self._pending.pop(msg_id, None)
            raise
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

    def create(self, *, idempotency_key: str | None = None, **params: Any) -> dict[str, Any]:
        """session/create {cwd?, title?, systemPrompt?, llm?, metadata?, tags?, secrets?, ...} -> {sessionId, createdAt, ...}.

        The new session is also open for writing on this connection. ``idempotency_key``
        (``idempotencyKey``, unique in the store; capability session.idempotencyKey.create): a
        retry with the same key and params answers the original session and creates nothing,
        also after a crash; other params under that key are Conflict ``idempotencyKeyReused``
        (``data["sessionId"]``: the original).
        """
        return self._object(*P.create(params, idempotency_key))

    def open(self, session_id: str | None = None, mode: str = "write", *, path: str | None = None,
             secrets: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """session/open -> {sessionId, mode, createdAt, ..., lastSeq, recovered?}.

        Open (mode "write") before appending to a session this process did not create.
        ``path`` (instead of the id) resumes by path: a session directory or journal in the store.
        """
        return self._object(*P.open(session_id, mode, path, secrets))

    def append(self, session_id: str, records: Sequence[Mapping[str, Any]], expected_last_seq: int | None = None,
               *, idempotency_key: str | None = None) -> dict[str, Any]:
        """session/append -> {firstSeq, lastSeq}; the records are durable once this returns.

        With ``expected_last_seq`` the append happens only if the session's lastSeq is that
        value (else Conflict). ``idempotency_key`` (per session): resending the same records
        with the same key answers the original seqs and writes nothing (protocol §6.3).
        """
        return self._object(*P.append(session_id, records, expected_last_seq, idempotency_key))

    def update(self, session_id: str, *, title: str | None = None, metadata: Mapping[str, Any] | None = None,
               tags: Sequence[str] | None = None, idempotency_key: str | None = None) -> dict[str, Any]:
        """session/update -> the effective header and ``seq``: rename, merge-patch metadata, replace tags.

        A record in the session (open for writing here); ``idempotency_key`` shares the key
        space of the session's appends.
        """
        return self._object(*P.update(session_id, title, metadata, tags, idempotency_key))

    def read(self, session_id: str, after_seq: int | None = None, limit: int | None = None,
             kinds: Sequence[str] | None = None, inline: bool = False) -> dict[str, Any]:
        """session/read -> {records: [{seq, ts, ...}], lastSeq, nextAfterSeq (None at the end)}.

        ``inline=True`` replaces blob references ({"$blob": ...}) by the strings they stand for.
        """
        return self._object(*P.read(session_id, after_seq, limit, kinds, inline))

    def iter_records(self, session_id: str, after_seq: int | None = None, limit: int | None = None,
                     kinds: Sequence[str] | None = None, inline: bool = False) -> Iterator[dict[str, Any]]:
        """Every record after ``after_seq``, page by page (``limit`` is the page size)."""
        cursor = after_seq
        while True:
            page = self.read(session_id, after_seq=cursor, limit=limit, kinds=kinds, inline=inline)
            yield from page["records"]
            cursor = page.get("nextAfterSeq")
            if cursor is None:
                return

    def read_all(self, session_id: str, kinds: Sequence[str] | None = None, page_size: int | None = None) -> list[dict[str, Any]]:
        """All records of a session, following nextAfterSeq until it is null."""
        return [*self.iter_records(session_id, limit=page_size, kinds=kinds)]

    def list(self, limit: int | None = None, cursor: str | None = None) -> dict[str, Any]:
        """session/list -> {sessions: [...], nextCursor?}."""
        return self._object(*P.list_(limit, cursor))

    def close(self, session_id: str) -> dict[str, Any]:
        """session/close: releases the session in this connection."""
        return self._object(*P.session("session/close", session_id))

    def context(self, session_id: str, prune: Mapping[str, int] | None = None) -> dict[str, Any]:
        """session/context: {messages, turn} to send to the provider on resume."""
        return self._object(*P.session("session/context", session_id, prune=dict(prune) if prune is not None else None))

    def compact(self, session_id: str, summary: str, through_seq: int, **extra: Any) -> dict[str, Any]:
        """session/compact: replace records up to through_seq by a summary checkpoint."""
        return self._object(*P.session("session/compact", session_id, summary=summary, throughSeq=through_seq, **extra))

    def history(self, session_id: str) -> dict[str, Any]:
        """session/history: the archived generations."""
        return self._object(*P.session("session/history", session_id))

    def rewind(self, session_id: str, to_seq: int, expected_last_seq: int | None = None) -> dict[str, Any]:
        """session/rewind -> {seq, toSeq, turn}: undo in place back to ``to_seq`` (capability session.rewind)."""
        return self._object(*P.rewind(session_id, to_seq, expected_last_seq))

    def subscribe(self, session_id: str, after_seq: int | None = None) -> dict[str, Any]:
        """session/subscribe -> {lastSeq}; records then arrive as session/didAppend notifications."""
        return self._object(*P.subscribe(session_id, after_seq))

    def unsubscribe(self, session_id: str) -> dict[str, Any]:
        """session/unsubscribe: no session/didAppend for this session follows."""
        return self._object(*P.session("session/unsubscribe", session_id))

    def turn(self, method: str, session_id: str, **params: Any) -> Any:
        """turn/start, turn/setPhase, ...: e.g. sc.turn("start", sid, kind="user")."""
        return self.request(f"turn/{method}", {"sessionId": session_id, **params})

    # -- agent runtime: tool scratch directories, state values, blobs ---------------------

    def allocate_scratch(self, session_id: str, request_id: str, keep_scratch: str | None = None) -> dict[str, Any]:
        """tool/allocateScratch -> {toolSeq, dir, tmpDir}: pass toolSeq in the tool's toolStart record."""
        params: dict[str, Any] = {"sessionId": session_id, "requestId": request_id}
        if keep_scratch is not None:
            params["keepScratch"] = keep_scratch
        return self._object("tool/allocateScratch", params)

    def set_state(self, session_id: str, key: str, value: Any) -> dict[str, Any]:
        """state/set: replace a small named value (string or JSON) atomically and durably."""
        return self._object("state/set", {"sessionId": session_id, "key": key, "value": value})

    def get_state(self, session_id: str, key: str) -> Any:
        """state/get: the value, or None when the key has none."""
        return self.request("state/get", {"sessionId": session_id, "key": key})["value"]

    def delete_state(self, session_id: str, key: str) -> bool:
        """state/delete: True when a value was removed."""
        return bool(self.request("state/delete", {"sessionId": session_id, "key": key})["deleted"])

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

    def _object(self, method: str, params: Any) -> dict[str, Any]:
        """A request whose result is a JSON object."""
        return cast("dict[str, Any]", self.request(method, params))

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
        data = encode(message, self.framing)
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
            for body in read_frames(cast(BinaryIO, self.proc.stdout), self.framing):
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
        stream = cast(io.BufferedReader, self.proc.stderr)
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

