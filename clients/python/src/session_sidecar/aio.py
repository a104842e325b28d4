"""The asyncio client: ``AsyncSidecar`` spawns session-sidecar as an asyncio subprocess.

Many requests may be in flight at once (pipelining): each is written at once and its answer
is matched by id by one reader task, in whatever order the server answers. Notifications
(``session/didAppend``, ``session/didOverflow``, ``turn/didChange``) are an async iterator:
``async for n in sc.notifications(): ...``. When the process dies, every pending request and
every later one raises SidecarExited, and the notification iterator ends.
"""

from __future__ import annotations

import asyncio
import base64
import codecs
import functools
import itertools
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any, AsyncIterator, Callable, Mapping, Sequence, cast

from . import params as P
from .client import _DEFAULT, CLIENT_NAME, CLIENT_VERSION, PROTOCOL_VERSION
from .command import resolve_command
from .errors import SidecarError, SidecarExited, error_from_response
from .framing import aread_frames, check_framing, encode

#: Largest NDJSON line the reader accepts (a session/read page is at most ~16 MiB plus envelope;
#: the server's own limit for a message is 32 MiB by default).
READ_LIMIT = 1 << 28


@dataclass(frozen=True)
class Notification:
    """A notification from the server: ``method`` and its ``params``."""

    method: str
    params: Any


def _retrieve(fut: "asyncio.Future[Any]") -> None:
    if not fut.cancelled():
        fut.exception()


_END = object()  # queued after the last notification, when the connection ends


class AsyncSidecar:
    """A spawned session-sidecar process and an asyncio JSON-RPC connection to it.

    ``async with AsyncSidecar(store=...) as sc:`` spawns it and runs initialize / initialized;
    leaving sends shutdown then exit and waits for the process (killing it after
    ``exit_timeout``). ``start()`` / ``stop()`` do the same by hand. Arguments are those of
    ``Sidecar`` (``command``: a list or a command line, else $SESSION_SIDECAR_COMMAND, else
    ``session-sidecar`` on PATH; ``on_notification(method, params)`` is called on the event
    loop for each notification, which is also queued for ``notifications()``).
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
        self.server_info: dict[str, Any] | None = None
        #: Answers whose id matched no request (e.g. a parse error answered with id null).
        self.unmatched: list[Any] = []
        self.proc: asyncio.subprocess.Process | None = None
        self._stderr = stderr
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._notes: asyncio.Queue[Any] = asyncio.Queue()
        self._reader: asyncio.Task[None] | None = None
        self._stderr_reader: asyncio.Task[None] | None = None
        #: The sidecar's stderr, with ``stderr="capture"``.
        self.stderr_text = ""
        self._closed: SidecarExited | None = None

    # -- lifecycle ----------------------------------------------------------------------

    async def spawn(self) -> "AsyncSidecar":
        """Starts the process and the reader task (no initialize)."""
        if self.proc is not None:
            raise RuntimeError("this AsyncSidecar was already started")
        argv = [*self.command, *self.args, *(["--store", self.store] if self.store is not None else [])]
        self.proc = await asyncio.create_subprocess_exec(
            *argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if self._stderr == "capture" else self._stderr,
            env=self.env, cwd=self.cwd, limit=READ_LIMIT,
        )
        loop = asyncio.get_running_loop()
        self._reader = loop.create_task(self._read_loop(), name="session-sidecar-reader")
        if self._stderr == "capture":
            self._stderr_reader = loop.create_task(self._stderr_loop(), name="session-sidecar-stderr")
        return self

    async def start(self) -> dict[str, Any]:
        """Spawns the process, sends initialize and the initialized notification."""
        await self.spawn()
        try:
            self.server_info = await self.request("initialize", {
                "protocolVersion": PROTOCOL_VERSION,
                "clientInfo": {"name": self.client_name, "version": self.client_version},
                "processId": os.getpid(),
            })
            await self.notify("initialized", {})
        except BaseException:
            await self.kill()
            raise
        return self.server_info

    @property
    def capabilities(self) -> dict[str, Any]:
        """The server's capabilities from initialize (empty before start)."""
        return dict((self.server_info or {}).get("capabilities") or {})

    async def stop(self, timeout: float | None = None) -> int | None:
        """shutdown, exit, and wait for the process; kills it if it does not end in time.

        Returns the exit code (negative: ended by that signal). Safe to call twice and after kill().
        """
        proc = self.proc
        if proc is None:
            return None
        wait = self.exit_timeout if timeout is None else timeout
        if proc.returncode is None and self._closed is None:
            try:
                await self.request("shutdown", None, timeout=wait)
                await self.notify("exit")
            except (SidecarError, TimeoutError, OSError):
                pass  # ended already, or not answering: EOF and then SIGKILL below
        self._close_stdin()
        try:
            await asyncio.wait_for(proc.wait(), wait)
        except TimeoutError:
            proc.kill()
            await proc.wait()
        await self._join()
        return proc.returncode

    async def kill(self) -> int | None:
        """Ends the sidecar at once with SIGKILL (no shutdown): a crash, for tests and demos."""
        proc = self.proc
        if proc is None:
            return None
        if proc.returncode is None:
            try:
                proc.kill()
            except ProcessLookupError:
                pass
        await proc.wait()
        self._close_stdin()
        await self._join()
        return proc.returncode

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode if self.proc is not None else None

    async def __aenter__(self) -> "AsyncSidecar":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- JSON-RPC -----------------------------------------------------------------------

    def request_async(self, method: str, params: Any = None) -> asyncio.Future[Any]:
        """``Sidecar.request_async``'s counterpart: the same as ``send_request``."""
        return self.send_request(method, params)

    def send_request(self, method: str, params: Any = None) -> asyncio.Future[Any]:
        """Writes a request now; returns the future of its result (for pipelining by hand).

        The frame is written before this returns (asyncio writes are not interleaved), so
        requests reach the server in the order of these calls.
        """
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if self._closed is not None:
            fut.set_exception(SidecarExited(self._closed.message, self._closed.returncode))
            return fut
        if self.proc is None or self.proc.stdin is None:
            fut.set_exception(SidecarExited("the sidecar was not started"))
            return fut
        msg_id = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        frame = encode(message, self.framing)  # not JSON-serializable: raises here, nothing pending
        self._pending[msg_id] = fut
        fut.add_done_callback(functools.partial(self._forget, msg_id))
        setattr(fut, "request_id", msg_id)
        try:
            self.proc.stdin.write(frame)
        except (OSError, RuntimeError) as e:
            if not fut.done():
                fut.set_exception(SidecarExited(f"cannot write to the sidecar: {e}", self.returncode))
        return fut

    async def request(self, method: str, params: Any = None, *, timeout: Any = _DEFAULT) -> Any:
        """Sends a request and waits for its result (raises the typed SidecarError).

        ``timeout`` defaults to the client's; on timeout the request is cancelled with
        ``$/cancelRequest`` and TimeoutError is raised. Call it from several tasks at once
        (``asyncio.gather``) to have several requests in flight.
        """
        fut = self.send_request(method, params)
        await self._drain()
        wait = self.timeout if timeout is _DEFAULT else timeout
        try:
            return await asyncio.wait_for(asyncio.shield(fut), wait)
        except TimeoutError:
            fut.add_done_callback(_retrieve)  # its late answer (or -32800) is nobody's concern now
            await self.cancel(fut)
            raise TimeoutError(f"no answer to {method} within {wait}s") from None

    async def cancel(self, fut: asyncio.Future[Any]) -> None:
        """Asks the sidecar to cancel a pending request (``$/cancelRequest``)."""
        msg_id = getattr(fut, "request_id", None)
        if msg_id is None or fut.done():
            return
        try:
            await self.notify("$/cancelRequest", {"id": msg_id})
        except (OSError, SidecarExited):
            pass

    async def notify(self, method: str, params: Any = None) -> None:
        """Sends a notification (no answer)."""
        if self.proc is None or self.proc.stdin is None:
            raise SidecarExited("the sidecar was not started")
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.proc.stdin.write(encode(message, self.framing))
        await self._drain()

    async def notifications(self) -> AsyncIterator[Notification]:
        """Every notification the server sends, in arrival order; ends when the connection ends.

        One consumer at a time: notifications are taken from one queue.
        """
        while True:
            item = await self._notes.get()
            if item is _END:
                self._notes.put_nowait(_END)  # later iterators end at once too
                return
            yield item

    # -- typed convenience methods (the same as Sidecar's) --------------------------------

    async def create(self, *, idempotency_key: str | None = None, **params: Any) -> dict[str, Any]:
        """session/create -> {sessionId, createdAt, ...}; the session is open for writing here.

        ``idempotency_key``: as ``Sidecar.create`` (a retry answers the original session).
        """
        return await self._object(*P.create(params, idempotency_key))

    async def open(self, session_id: str | None = None, mode: str = "write", *, path: str | None = None,
                   secrets: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """session/open -> {sessionId, mode, ..., lastSeq}."""
        return await self._object(*P.open(session_id, mode, path, secrets))

    async def append(self, session_id: str, records: Sequence[Mapping[str, Any]],
                     expected_last_seq: int | None = None, *, idempotency_key: str | None = None) -> dict[str, Any]:
        """session/append -> {firstSeq, lastSeq}, answered once the records are durable.

        ``idempotency_key``: as ``Sidecar.append`` (a resend answers the original seqs).
        """
        return await self._object(*P.append(session_id, records, expected_last_seq, idempotency_key))

    async def update(self, session_id: str, *, title: str | None = None, metadata: Mapping[str, Any] | None = None,
                     tags: Sequence[str] | None = None, idempotency_key: str | None = None) -> dict[str, Any]:
        """session/update -> the effective header and ``seq`` (title, metadata merge patch, tags)."""
        return await self._object(*P.update(session_id, title, metadata, tags, idempotency_key))

    async def read(self, session_id: str, after_seq: int | None = None, limit: int | None = None,
                   kinds: Sequence[str] | None = None, inline: bool = False) -> dict[str, Any]:
        """session/read -> {records, lastSeq, nextAfterSeq}."""
        return await self._object(*P.read(session_id, after_seq, limit, kinds, inline))

    async def iter_records(self, session_id: str, after_seq: int | None = None, limit: int | None = None,
                           kinds: Sequence[str] | None = None, inline: bool = False) -> AsyncIterator[dict[str, Any]]:
        """Every record after ``after_seq``, page by page (``limit`` is the page size)."""
        cursor = after_seq
        while True:
            page = await self.read(session_id, after_seq=cursor, limit=limit, kinds=kinds, inline=inline)
            for record in page["records"]:
                yield record
            cursor = page.get("nextAfterSeq")
            if cursor is None:
                return

    async def read_all(self, session_id: str, kinds: Sequence[str] | None = None,
                       page_size: int | None = None) -> list[dict[str, Any]]:
        """All records of a session, following nextAfterSeq until it is null."""
        return [r async for r in self.iter_records(session_id, limit=page_size, kinds=kinds)]

    async def list(self, limit: int | None = None, cursor: str | None = None) -> dict[str, Any]:
        """session/list -> {sessions, nextCursor?}."""
        return await self._object(*P.list_(limit, cursor))

    async def close(self, session_id: str) -> dict[str, Any]:
        """session/close: releases the session in this connection."""
        return await self._object(*P.session("session/close", session_id))

    async def context(self, session_id: str, prune: Mapping[str, int] | None = None) -> dict[str, Any]:
        """session/context -> {messages, turn}."""
        return await self._object(*P.session("session/context", session_id, prune=dict(prune) if prune is not None else None))

    async def compact(self, session_id: str, summary: str, through_seq: int, **extra: Any) -> dict[str, Any]:
        """session/compact: replace the records up to through_seq by a summary checkpoint."""
        return await self._object(*P.session("session/compact", session_id, summary=summary, throughSeq=through_seq, **extra))

    async def history(self, session_id: str) -> dict[str, Any]:
        """session/history: the archived generations."""
        return await self._object(*P.session("session/history", session_id))

    async def rewind(self, session_id: str, to_seq: int, expected_last_seq: int | None = None) -> dict[str, Any]:
        """session/rewind -> {seq, toSeq, turn} (capability session.rewind)."""
        return await self._object(*P.rewind(session_id, to_seq, expected_last_seq))

    async def subscribe(self, session_id: str, after_seq: int | None = None) -> dict[str, Any]:
        """session/subscribe -> {lastSeq}; records then arrive as session/didAppend notifications."""
        return await self._object(*P.subscribe(session_id, after_seq))

    async def unsubscribe(self, session_id: str) -> dict[str, Any]:
        """session/unsubscribe."""
        return await self._object(*P.session("session/unsubscribe", session_id))

    async def turn(self, method: str, session_id: str, **params: Any) -> Any:
        """turn/start, turn/setPhase, ...: e.g. await sc.turn("start", sid, kind="user")."""
        return await self.request(f"turn/{method}", {"sessionId": session_id, **params})

    async def allocate_scratch(self, session_id: str, request_id: str, keep_scratch: str | None = None) -> dict[str, Any]:
        """tool/allocateScratch -> {toolSeq, dir, tmpDir}: pass toolSeq in the tool's toolStart record."""
        params: dict[str, Any] = {"sessionId": session_id, "requestId": request_id}
        if keep_scratch is not None:
            params["keepScratch"] = keep_scratch
        return await self._object("tool/allocateScratch", params)

    async def set_state(self, session_id: str, key: str, value: Any) -> dict[str, Any]:
        """state/set."""
        return await self._object("state/set", {"sessionId": session_id, "key": key, "value": value})

    async def get_state(self, session_id: str, key: str) -> Any:
        """state/get: the value, or None."""
        return (await self.request("state/get", {"sessionId": session_id, "key": key}))["value"]

    async def delete_state(self, session_id: str, key: str) -> bool:
        """state/delete: True when a value was removed."""
        return bool((await self.request("state/delete", {"sessionId": session_id, "key": key}))["deleted"])

    async def read_blob(self, session_id: str, ref: str | Mapping[str, Any], chunk: int = 1 << 20) -> bytes:
        """The bytes of a blob, fetched with blob/get in chunks."""
        ref_id = ref["$blob"] if isinstance(ref, Mapping) else ref
        parts: list[bytes] = []
        offset = 0
        while True:
            r = await self.request("blob/get", {"sessionId": session_id, "ref": ref_id, "offset": offset, "length": chunk})
            data = base64.b64decode(r["dataBase64"])
            parts.append(data)
            offset += len(data)
            if r["eof"]:
                return b"".join(parts)

    # -- internals ----------------------------------------------------------------------

    def _forget(self, msg_id: int, _fut: "asyncio.Future[Any]") -> None:
        self._pending.pop(msg_id, None)

    async def _object(self, method: str, params: Any) -> dict[str, Any]:
        """A request whose result is a JSON object."""
        return cast("dict[str, Any]", await self.request(method, params))

    async def _drain(self) -> None:
        if self.proc is None or self.proc.stdin is None:
            return
        try:
            await self.proc.stdin.drain()
        except (OSError, RuntimeError):
            pass  # the reader task notices the end and fails what is pending

    def _close_stdin(self) -> None:
        if self.proc is not None and self.proc.stdin is not None and not self.proc.stdin.is_closing():
            try:
                self.proc.stdin.close()
            except (OSError, RuntimeError):
                pass

    async def _join(self) -> None:
        for task in (self._reader, self._stderr_reader):
            if task is not None and task is not asyncio.current_task():
                try:
                    await asyncio.wait_for(asyncio.shield(task), 5)
                except (TimeoutError, asyncio.CancelledError):
                    pass

    async def _read_loop(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        reason = "the sidecar closed its output"
        try:
            async for body in aread_frames(self.proc.stdout, self.framing):
                try:
                    message = json.loads(body)
                except ValueError:
                    reason = f"unreadable JSON from the sidecar: {body[:120]!r}"
                    break
                self._dispatch(message)
        except (ValueError, OSError) as e:
            reason = f"unreadable output from the sidecar: {e}"
        except Exception as e:  # noqa: BLE001 - whatever ends the reader must fail what is pending
            reason = f"the reader of the sidecar's output failed: {type(e).__name__}"
        rc = self.proc.returncode
        if rc is None:
            try:
                rc = await asyncio.wait_for(self.proc.wait(), 0.5)
            except TimeoutError:
                rc = None
        if rc is not None:
            reason = f"{reason} (exit code {rc})" if rc >= 0 else f"{reason} (killed by signal {-rc})"
        self._fail_all(reason, rc)

    async def _stderr_loop(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        while chunk := await self.proc.stderr.read(4096):
            self.stderr_text += decoder.decode(chunk)
        self.stderr_text += decoder.decode(b"", final=True)

    def _dispatch(self, message: Any) -> None:
        if not isinstance(message, dict):
            self.unmatched.append(message)
            return
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:  # a request from the server: this client serves none
                if self.proc is not None and self.proc.stdin is not None:
                    self.proc.stdin.write(encode({"jsonrpc": "2.0", "id": message["id"], "error": {
                        "code": -32601, "message": f"client does not handle {method}"}}, self.framing))
                return
            params = message.get("params")
            self._notes.put_nowait(Notification(method, params))
            if self.on_notification is not None:
                try:
                    self.on_notification(method, params)
                except Exception as e:  # a callback bug must not kill the reader
                    print(f"session_sidecar: on_notification raised {e!r}", file=sys.stderr)
            return
        msg_id = message.get("id")
        fut = self._pending.pop(msg_id, None) if isinstance(msg_id, int) else None
        if fut is None:
            self.unmatched.append(message)
            return
        if fut.done():
            return
        if "error" in message:
            fut.set_exception(error_from_response(message["error"]))
        else:
            fut.set_result(message.get("result"))

    def _fail_all(self, reason: str, returncode: int | None) -> None:
        self._closed = SidecarExited(reason, returncode)
        pending, self._pending = self._pending, {}
        for fut in pending.values():
            if not fut.done():
                fut.set_exception(SidecarExited(reason, returncode))
        self._notes.put_nowait(_END)
