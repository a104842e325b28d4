"""``SidecarSaver``: a LangGraph checkpointer (``BaseCheckpointSaver``) over a session-sidecar.

Importing this module imports ``langgraph`` (not a dependency of this package: install it
yourself); nothing else in ``session_sidecar`` imports it.

It writes exactly what the JavaScript saver (``session-sidecar/adapters/langgraph``,
src/adapters/langgraph/) writes, so a Python graph and a JavaScript graph resume each other's
threads on one store:

- one sidecar session per (thread_id, checkpoint_ns), tagged ``langgraph``,
  ``langgraph.thread:<h(thread_id)>`` and ``langgraph.ns:<h([thread_id, ns])>`` (h: the first 40
  hex digits of sha256 of the JSON text, as JavaScript's ``JSON.stringify`` writes it), found
  with one ``session/list`` ``tags`` filter; of two, the smallest session id is the thread's;
- a ``put`` is one ``event`` record ``langgraph.checkpoint`` {threadId, ns, id, parentId,
  checkpoint, metadata, values: [[channel, version, value | null]]} — the checkpoint without
  its ``channel_values``, and the values of the channels in ``new_versions`` only;
- a ``put_writes`` is one ``event`` record ``langgraph.writes`` {threadId, ns, checkpointId,
  taskId, taskPath, writes: [[idx, channel, value]]};
- every serialized value is ``{"type", "text"}`` (bytes that are UTF-8) or ``{"type",
  "base64"}``: the ``[type, bytes]`` of a serde's ``dumps_typed``. The JavaScript serde knows
  only ``"json"`` and ``"bytes"``, so values are written as ``"json"`` when they are plain JSON
  (dicts with string keys, lists, strings, finite numbers, booleans, None) or LangChain
  serializable objects (messages: the ``lc: 1`` constructor form both languages revive), as
  ``"bytes"`` for bytes, and only otherwise by the serde (``"msgpack"``: tuples, sets,
  datetimes, dataclasses, pydantic models, ``Send``, ``Interrupt``…), which only Python reads;
- the per-session index (checkpoint / channel-version / writes → seq) is cached in the session's
  state key ``langgraph-index`` ({v: 1, ...}, the JavaScript layout), saved every 64 records and
  at ``close``.

With a ``Sidecar`` (threads) the sync methods are native and the async ones run them in a
thread; with an ``AsyncSidecar`` the async methods are native and the sync ones run on its
event loop (from another thread only). ``put`` / ``put_writes`` return after the sidecar
answered the append, i.e. after fdatasync (file store) or COMMIT (PostgreSQL).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import math
import re
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Coroutine, Generator, Iterator, Sequence
from typing import Any, TypeVar, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from .aio import AsyncSidecar
from .client import Sidecar
from .errors import SessionNotFound

__all__ = [
    "SidecarSaver", "CHECKPOINT_EVENT", "WRITES_EVENT", "ALL_TAG", "INDEX_STATE_KEY",
    "thread_tag", "namespace_tag", "encode_serialized", "decode_serialized",
]

CHECKPOINT_EVENT = "langgraph.checkpoint"
WRITES_EVENT = "langgraph.writes"
ALL_TAG = "langgraph"
INDEX_STATE_KEY = "langgraph-index"
#: Save the index copy once it is this many records behind the journal.
SAVE_EVERY = 64
#: Records kept decoded per session.
CACHE_RECORDS = 256

T = TypeVar("T")
Call = tuple[str, dict[str, Any]]
#: A sans-I/O operation: yields requests, is sent their results, returns its value.
Op = Generator[Call, Any, T]

# -- JSON as JavaScript writes it -----------------------------------------------------------

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def js_json(value: Any) -> str:
    """``JSON.stringify(value)`` for JSON values (strings, numbers, lists, dicts)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _h(value: Any) -> str:
    return hashlib.sha256(js_json(value).encode("utf-8")).hexdigest()[:40]


def thread_tag(thread_id: str) -> str:
    return f"langgraph.thread:{_h(thread_id)}"


def namespace_tag(thread_id: str, ns: str) -> str:
    return f"langgraph.ns:{_h([thread_id, ns])}"


# -- serialized values ----------------------------------------------------------------------

def encode_serialized(type_: str, data: bytes) -> dict[str, str]:
    """``[type, bytes]`` as it travels in a record: text when the bytes are UTF-8, else base64."""
    try:
        return {"type": type_, "text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"type": type_, "base64": base64.b64encode(data).decode("ascii")}


def decode_serialized(s: dict[str, Any]) -> tuple[str, bytes]:
    if isinstance(s.get("text"), str):
        return str(s["type"]), cast(str, s["text"]).encode("utf-8", "surrogatepass")
    return str(s["type"]), base64.b64decode(cast(str, s["base64"]))


def _is_serialized(v: Any) -> bool:
    return isinstance(v, dict) and isinstance(v.get("type"), str) and (
        isinstance(v.get("text"), str) or isinstance(v.get("base64"), str))


class _NotJson(Exception):
    pass


def _json_tree(obj: Any) -> Any:
    """The value as a JSON tree both languages read back as it was, or _NotJson."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        if not math.isfinite(obj):
            raise _NotJson
        return obj
    if type(obj) is list:
        return [_json_tree(v) for v in obj]
    if type(obj) is dict:
        if not all(isinstance(k, str) for k in obj):
            raise _NotJson
        return {k: _json_tree(v) for k, v in obj.items()}
    to_json = getattr(obj, "to_json", None)
    is_lc = getattr(type(obj), "is_lc_serializable", None)
    if callable(to_json) and callable(is_lc) and is_lc():
        tree = to_json()
        if not isinstance(tree, dict) or tree.get("type") != "constructor":
            raise _NotJson
        tree = dict(tree)
        # Python names messages by their legacy id (langchain.schema.messages.X), which
        # JavaScript's load() does not know; both revive langchain_core.messages.X.
        lc_id = tree.get("id")
        if isinstance(lc_id, list) and lc_id[:3] == ["langchain", "schema", "messages"] and len(lc_id) == 4:
            tree["id"] = ["langchain_core", "messages", lc_id[3]]
        return _json_tree(tree)
    raise _NotJson


def dumps_value(serde: SerializerProtocol, obj: Any) -> tuple[str, bytes]:
    """``[type, bytes]`` of a value: "json" / "bytes" when JavaScript can read it, else the serde's."""
    if isinstance(obj, bytes):
        return "bytes", obj
    try:
        return "json", js_json(_json_tree(obj)).encode("utf-8")
    except (_NotJson, ValueError, TypeError, UnicodeEncodeError, RecursionError):
        return serde.dumps_typed(obj)


def loads_value(serde: SerializerProtocol, s: dict[str, Any]) -> Any:
    return serde.loads_typed(decode_serialized(s))


# -- records ---------------------------------------------------------------------------------

def _is_version(v: Any) -> bool:
    return isinstance(v, (int, float, str)) and not isinstance(v, bool)


def _as_record(r: dict[str, Any]) -> dict[str, Any] | None:
    """A stored record as one of ours (validated as records.ts does), or None."""
    p = r.get("payload")
    if r.get("kind") != "event" or not isinstance(r.get("seq"), int) or not isinstance(p, dict):
        return None
    if not isinstance(p.get("threadId"), str) or not isinstance(p.get("ns"), str):
        return None
    if r.get("type") == CHECKPOINT_EVENT:
        ok = (isinstance(p.get("id"), str) and (p.get("parentId") is None or isinstance(p.get("parentId"), str))
              and _is_serialized(p.get("checkpoint")) and _is_serialized(p.get("metadata"))
              and isinstance(p.get("values"), list)
              and all(isinstance(v, list) and len(v) >= 3 and isinstance(v[0], str) and _is_version(v[1])
                      and (v[2] is None or _is_serialized(v[2])) for v in p["values"]))
        return r if ok else None
    if r.get("type") == WRITES_EVENT:
        ok = (isinstance(p.get("checkpointId"), str) and isinstance(p.get("taskId"), str)
              and isinstance(p.get("taskPath"), str) and isinstance(p.get("writes"), list)
              and all(isinstance(w, list) and len(w) >= 3 and isinstance(w[0], int) and isinstance(w[1], str)
                      and _is_serialized(w[2]) for w in p["writes"]))
        return r if ok else None
    return None


def _vkey(channel: str, version: Any) -> str:
    return js_json([channel, version])


class _Index:
    """Where each checkpoint, channel version and checkpoint's writes are (threadIndex.ts)."""

    def __init__(self) -> None:
        self.thread_id: str | None = None
        self.ns: str | None = None
        self.seq = 0
        self.checkpoints: dict[str, tuple[int, str | None]] = {}
        self.values: dict[str, int] = {}
        self.writes: dict[str, list[int]] = {}

    @classmethod
    def from_saved(cls, v: Any) -> _Index:
        index = cls()
        if not isinstance(v, dict) or v.get("v") != 1 or not isinstance(v.get("seq"), int) or not all(
                isinstance(v.get(k), list) for k in ("checkpoints", "values", "writes")):
            return index
        try:
            index.thread_id = v.get("threadId")
            index.ns = v.get("ns")
            index.seq = v["seq"]
            for cid, seq, parent in v["checkpoints"]:
                index.checkpoints[cid] = (seq, parent)
            for ch, ver, seq in v["values"]:
                index.values[_vkey(ch, ver)] = seq
            for cid, seqs in v["writes"]:
                index.writes[cid] = list(seqs)
        except (TypeError, ValueError):
            return cls()
        return index

    def to_saved(self) -> dict[str, Any]:
        values = []
        for k, seq in self.values.items():
            ch, ver = json.loads(k)
            values.append([ch, ver, seq])
        return {
            "v": 1, "threadId": self.thread_id, "ns": self.ns, "seq": self.seq,
            "checkpoints": [[cid, seq, parent] for cid, (seq, parent) in self.checkpoints.items()],
            "values": values, "writes": [[cid, list(seqs)] for cid, seqs in self.writes.items()],
        }

    def apply(self, r: dict[str, Any]) -> None:
        """Records an event record of ours (read without inlining: only ids and versions are used)."""
        p = r.get("payload")
        if r.get("kind") != "event" or not isinstance(r.get("seq"), int) or not isinstance(p, dict):
            return
        if not isinstance(p.get("threadId"), str) or not isinstance(p.get("ns"), str):
            return
        seq: int = r["seq"]
        if r.get("type") == CHECKPOINT_EVENT and isinstance(p.get("id"), str) and (
                p.get("parentId") is None or isinstance(p.get("parentId"), str)) and isinstance(p.get("values"), list):
            self._own(p)
            self.checkpoints[p["id"]] = (seq, p.get("parentId"))
            for v in p["values"]:
                if isinstance(v, list) and len(v) >= 2 and isinstance(v[0], str) and _is_version(v[1]):
                    self.values[_vkey(v[0], v[1])] = seq
        elif r.get("type") == WRITES_EVENT and isinstance(p.get("checkpointId"), str):
            self._own(p)
            self.writes.setdefault(p["checkpointId"], []).append(seq)

    def _own(self, p: dict[str, Any]) -> None:
        if self.thread_id is None:
            self.thread_id = p["threadId"]
        if self.ns is None:
            self.ns = p["ns"]

    def ids_newest_first(self) -> list[str]:
        return sorted(self.checkpoints, reverse=True)


class _Session:
    """One thread (+ namespace) = one sidecar session (threadSession.ts)."""

    def __init__(self, session_id: str, secrets: dict[str, Any] | None) -> None:
        self.session_id = session_id
        self.secrets = secrets
        self.index = _Index()
        self.writable = False
        self.saved_seq = 0
        self.loaded = False
        self.cache: OrderedDict[int, dict[str, Any]] = OrderedDict()

    def sync(self) -> Op[_Index]:
        yield from self._load()
        if not self.writable:
            yield from self._catch_up()
        return self.index

    def append(self, record: dict[str, Any]) -> Op[int]:
        yield from self._load()
        if not self.writable:
            params: dict[str, Any] = {"sessionId": self.session_id, "mode": "write"}
            if self.secrets is not None:
                params["secrets"] = self.secrets
            yield ("session/open", params)
            self.writable = True
            yield from self._catch_up()
        result = yield ("session/append", {"sessionId": self.session_id, "records": [record]})
        last_seq: int = result["lastSeq"]
        self.index.apply({**record, "seq": last_seq})
        self.index.seq = last_seq
        if self.index.seq - self.saved_seq >= SAVE_EVERY:
            yield from self._save()
        return last_seq

    def records(self, seqs: Sequence[int]) -> Op[dict[int, dict[str, Any]]]:
        out: dict[int, dict[str, Any]] = {}
        for seq in dict.fromkeys(seqs):
            r = self.cache.get(seq)
            if r is None:
                r = yield from self._read_one(seq)
                if r is None:
                    r = yield from self._read_archived(seq)
                if r is None:
                    continue
                if len(self.cache) >= CACHE_RECORDS:
                    self.cache.popitem(last=False)
                self.cache[seq] = r
            out[seq] = r
        return out

    def flush(self) -> Op[None]:
        if self.writable and self.index.seq > self.saved_seq:
            yield from self._save()

    def _read_one(self, seq: int, generation: int | None = None) -> Op[dict[str, Any] | None]:
        params: dict[str, Any] = {"sessionId": self.session_id, "afterSeq": seq - 1, "limit": 1, "inline": True}
        if generation is not None:
            params["generation"] = generation
        page = yield ("session/read", params)
        recs = page["records"]
        return _as_record(recs[0]) if recs and recs[0].get("seq") == seq else None

    def _generations(self) -> Op[list[dict[str, Any]]]:
        r = yield ("session/history", {"sessionId": self.session_id})
        return list(r["generations"])

    def _read_archived(self, seq: int) -> Op[dict[str, Any] | None]:
        for g in (yield from self._generations()):
            if g["throughSeq"] >= seq:
                return (yield from self._read_one(seq, g["generation"]))
        return None

    def _save(self) -> Op[None]:
        seq = self.index.seq
        try:
            yield ("state/set", {"sessionId": self.session_id, "key": INDEX_STATE_KEY, "value": self.index.to_saved()})
        except Exception:  # too large, or fail-stopped: the journal stays the truth
            pass
        self.saved_seq = seq

    def _load(self) -> Op[None]:
        if self.loaded:
            return
        r = yield ("state/get", {"sessionId": self.session_id, "key": INDEX_STATE_KEY})
        self.index = _Index.from_saved(r.get("value"))
        self.saved_seq = self.index.seq
        self.loaded = True

    def _catch_up(self) -> Op[None]:
        while True:
            page = yield ("session/read", {"sessionId": self.session_id, "afterSeq": self.index.seq,
                                           "kinds": ["event", "checkpoint"], "limit": 1000})
            for r in page["records"]:
                if r.get("kind") == "checkpoint" and r["seq"] > self.index.seq:
                    yield from self._catch_up_archived(r["seq"])
                self.index.apply(r)
            if page.get("nextAfterSeq") is None:
                self.index.seq = max(self.index.seq, page["lastSeq"])
                return
            self.index.seq = page["nextAfterSeq"]

    def _catch_up_archived(self, through_seq: int) -> Op[None]:
        for g in (yield from self._generations()):
            if g["throughSeq"] <= self.index.seq:
                continue
            after = self.index.seq
            while True:
                page = yield ("session/read", {"sessionId": self.session_id, "generation": g["generation"],
                                               "afterSeq": after, "kinds": ["event"], "limit": 1000})
                for r in page["records"]:
                    if r["seq"] <= min(g["throughSeq"], through_seq):
                        self.index.apply(r)
                nxt = page.get("nextAfterSeq")
                if nxt is None or nxt >= g["throughSeq"]:
                    break
                after = nxt
            self.index.seq = min(g["throughSeq"], through_seq)
            if self.index.seq >= through_seq:
                return


class _Directory:
    """Which session holds which thread (directory.ts)."""

    def __init__(self, secrets: dict[str, Any] | None) -> None:
        self.secrets = secrets
        self.by_key: dict[tuple[str, str], _Session] = {}
        self.by_session: dict[str, _Session] = {}

    def find(self, thread_id: str, ns: str) -> Op[_Session | None]:
        known = self.by_key.get((thread_id, ns))
        if known is not None:
            return known
        found = yield from self._summaries(namespace_tag(thread_id, ns))
        if not found:
            return None
        s = self._session(found[0])
        self.by_key[(thread_id, ns)] = s
        return s

    def find_or_create(self, thread_id: str, ns: str) -> Op[_Session]:
        found = yield from self.find(thread_id, ns)
        if found is not None:
            return found
        params: dict[str, Any] = {
            "title": f"LangGraph thread {thread_id}{f' ({ns})' if ns else ''}"[:1024],
            "tags": [ALL_TAG, thread_tag(thread_id), namespace_tag(thread_id, ns)],
            "metadata": {"langgraph": {"threadId": thread_id, "checkpointNs": ns}},
        }
        if self.secrets is not None:
            params["secrets"] = self.secrets
        created = yield ("session/create", params)
        s = _Session(created["sessionId"], self.secrets)
        s.writable = True
        s.loaded = True
        s.index.thread_id = thread_id
        s.index.ns = ns
        self.by_session[s.session_id] = s
        self.by_key[(thread_id, ns)] = s
        return s

    def sessions(self, thread_id: str | None) -> Op[list[_Session]]:
        ids = yield from self._summaries(ALL_TAG if thread_id is None else thread_tag(thread_id))
        chosen: dict[tuple[str, str], _Session] = {}
        for sid in ids:
            s = self._session(sid)
            try:
                index = yield from s.sync()
            except SessionNotFound:
                self.forget(sid)
                continue
            if index.thread_id is None or index.ns is None:
                continue
            chosen.setdefault((index.thread_id, index.ns), s)
        return list(chosen.values())

    def session_ids_of(self, thread_id: str) -> Op[list[str]]:
        return (yield from self._summaries(thread_tag(thread_id)))

    def forget(self, session_id: str) -> None:
        self.by_session.pop(session_id, None)
        for k in [k for k, s in self.by_key.items() if s.session_id == session_id]:
            del self.by_key[k]

    def writable(self) -> list[_Session]:
        return [s for s in self.by_session.values() if s.writable]

    def _session(self, session_id: str) -> _Session:
        s = self.by_session.get(session_id)
        if s is None:
            s = self.by_session[session_id] = _Session(session_id, self.secrets)
        return s

    def _summaries(self, tag: str) -> Op[list[str]]:
        ids: list[str] = []
        cursor: str | None = None
        while True:
            params: dict[str, Any] = {"tags": [tag], "limit": 1000}
            if cursor:
                params["cursor"] = cursor
            page = yield ("session/list", params)
            ids.extend(s["sessionId"] for s in page["sessions"])
            cursor = page.get("nextCursor")
            if not cursor:
                return sorted(ids)


# -- the saver --------------------------------------------------------------------------------

def _thread_of(config: RunnableConfig, what: str) -> tuple[str, str]:
    conf = config.get("configurable") or {}
    thread_id = conf.get("thread_id")
    if not isinstance(thread_id, str) or thread_id == "":
        raise ValueError(f'Failed to {what}: the RunnableConfig has no "thread_id" string in its "configurable".')
    ns = conf.get("checkpoint_ns") or ""
    if not isinstance(ns, str):
        raise ValueError(f'Failed to {what}: "checkpoint_ns" must be a string.')
    return thread_id, ns


def _config(thread_id: str, ns: str, checkpoint_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}}


def _run_sync(sc: Sidecar, op: Op[T]) -> T:
    send: Any = None
    exc: BaseException | None = None
    while True:
        try:
            call = op.throw(exc) if exc is not None else op.send(send)
        except StopIteration as stop:
            return cast(T, stop.value)
        exc = None
        try:
            send = sc.request(call[0], call[1])
        except Exception as e:  # noqa: BLE001 - handed to the operation
            exc, send = e, None


async def _run_async(sc: AsyncSidecar, op: Op[T]) -> T:
    send: Any = None
    exc: BaseException | None = None
    while True:
        try:
            call = op.throw(exc) if exc is not None else op.send(send)
        except StopIteration as stop:
            return cast(T, stop.value)
        exc = None
        try:
            send = await sc.request(call[0], call[1])
        except Exception as e:  # noqa: BLE001 - handed to the operation
            exc, send = e, None


def _check_capabilities(server_info: dict[str, Any] | None) -> None:
    caps = (server_info or {}).get("capabilities") or {}
    session = caps.get("session") or {}
    if not (session.get("list") or {}).get("filters") or not session.get("delete") or not caps.get("state"):
        raise RuntimeError("this sidecar lacks session/list filters, session/delete or state/*, "
                           "which the LangGraph checkpointer needs")


class SidecarSaver(BaseCheckpointSaver[int]):
    """LangGraph checkpointer over a session-sidecar, sharing the JavaScript saver's records.

    Args:
        sidecar: a started ``Sidecar`` (sync methods native) or ``AsyncSidecar`` (async methods
            native). It is not stopped by ``close``/``aclose`` (which save the indexes and close
            the thread sessions) unless the saver made it (``from_store`` / ``afrom_store``).
        secrets: ``{env?, values?}`` registered on every thread session (at create and at every
            write open): a checkpoint holding one is refused with ``SecretRejected``.
        serde: the serializer for values plain JSON cannot carry (default: LangGraph's
            ``JsonPlusSerializer``; it also reads every "json" value).
    """

    def __init__(self, sidecar: Sidecar | AsyncSidecar, *, secrets: dict[str, Any] | None = None,
                 serde: SerializerProtocol | None = None) -> None:
        super().__init__(serde=serde)
        if not isinstance(sidecar, (Sidecar, AsyncSidecar)):
            raise TypeError("sidecar must be a session_sidecar.Sidecar or AsyncSidecar")
        if sidecar.server_info is not None:
            _check_capabilities(sidecar.server_info)
        self.sidecar = sidecar
        self._owns = False
        self._dir = _Directory(dict(secrets) if secrets is not None else None)
        self._lock = threading.RLock()
        self._alock: asyncio.Lock | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        if isinstance(sidecar, AsyncSidecar):
            with contextlib.suppress(RuntimeError):
                self._loop = asyncio.get_running_loop()

    # -- construction and end ----------------------------------------------------------------

    @classmethod
    @contextlib.contextmanager
    def from_store(cls, store: str | None = None, *, secrets: dict[str, Any] | None = None,
                   serde: SerializerProtocol | None = None, **sidecar_options: Any) -> Iterator[SidecarSaver]:
        """``with SidecarSaver.from_store("/tmp/store") as saver:`` — spawns a ``Sidecar``, stops it at the end."""
        sc = Sidecar(store=store, **sidecar_options)
        sc.start()
        try:
            _check_capabilities(sc.server_info)
            saver = cls(sc, secrets=secrets, serde=serde)
            saver._owns = True
        except BaseException:
            sc.kill()
            raise
        try:
            yield saver
        finally:
            saver.close()

    @classmethod
    @contextlib.asynccontextmanager
    async def afrom_store(cls, store: str | None = None, *, secrets: dict[str, Any] | None = None,
                          serde: SerializerProtocol | None = None, **sidecar_options: Any) -> AsyncIterator[SidecarSaver]:
        """``async with SidecarSaver.afrom_store(...) as saver:`` — spawns an ``AsyncSidecar``."""
        sc = AsyncSidecar(store=store, **sidecar_options)
        await sc.start()
        try:
            _check_capabilities(sc.server_info)
            saver = cls(sc, secrets=secrets, serde=serde)
            saver._owns = True
        except BaseException:
            await sc.kill()
            raise
        try:
            yield saver
        finally:
            await saver.aclose()

    def _close_op(self) -> Op[None]:
        for s in self._dir.writable():
            with contextlib.suppress(Exception):
                yield from s.flush()
            if not self._owns:
                with contextlib.suppress(Exception):
                    yield ("session/close", {"sessionId": s.session_id})
            s.writable = False
            s.loaded = False

    def close(self) -> None:
        """Saves the thread indexes, then closes the sessions (or stops the sidecar it spawned)."""
        if self.sidecar.returncode is not None or self.sidecar.proc is None:
            return
        self._sync(self._close_op())
        if self._owns:
            if isinstance(self.sidecar, Sidecar):
                self.sidecar.stop()
            else:
                self._on_loop(self.sidecar.stop())

    async def aclose(self) -> None:
        if self.sidecar.returncode is not None or self.sidecar.proc is None:
            return
        await self._async(self._close_op())
        if self._owns:
            if isinstance(self.sidecar, AsyncSidecar):
                await self.sidecar.stop()
            else:
                await asyncio.to_thread(self.sidecar.stop)

    # -- drivers -----------------------------------------------------------------------------

    def _sync(self, op: Op[T]) -> T:
        sc = self.sidecar
        if isinstance(sc, Sidecar):
            with self._lock:
                return _run_sync(sc, op)
        return self._on_loop(self._async(op))

    def _on_loop(self, coro: Coroutine[Any, Any, T]) -> T:
        loop = self._loop
        if loop is None:
            coro.close()
            raise RuntimeError("this SidecarSaver (over an AsyncSidecar) has not seen its event loop yet: "
                               "use the async methods (aget_tuple, aput, ...) or construct it inside the loop")
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            coro.close()
            raise asyncio.InvalidStateError(
                "synchronous calls to a SidecarSaver over an AsyncSidecar from its event loop thread would "
                "block the loop: use the async methods (graph.ainvoke, aget_tuple, ...) there")
        return asyncio.run_coroutine_threadsafe(coro, loop).result()

    async def _async(self, op: Op[T]) -> T:
        sc = self.sidecar
        if isinstance(sc, Sidecar):
            return await asyncio.to_thread(self._sync, op)
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        if self._alock is None:
            self._alock = asyncio.Lock()
        async with self._alock:
            return await _run_async(sc, op)

    # -- operations --------------------------------------------------------------------------

    def _get_tuple_op(self, config: RunnableConfig) -> Op[CheckpointTuple | None]:
        if not isinstance((config.get("configurable") or {}).get("thread_id"), str):
            return None
        thread_id, ns = _thread_of(config, "get a checkpoint")
        session = yield from self._dir.find(thread_id, ns)
        if session is None:
            return None
        try:
            index = yield from session.sync()
            cid = get_checkpoint_id(config)
            if not cid:
                ids = index.ids_newest_first()
                if not ids:
                    return None
                cid = ids[0]
            record = yield from self._checkpoint_record(session, index, cid)
            if record is None:
                return None
            return (yield from self._tuple(session, index, record, None))
        except SessionNotFound:
            self._dir.forget(session.session_id)
            return None

    def _list_op(self, config: RunnableConfig | None, filter: dict[str, Any] | None,
                 before: RunnableConfig | None, limit: int | None) -> Op[list[CheckpointTuple]]:
        conf = (config or {}).get("configurable") or {}
        thread_id = conf.get("thread_id")
        ns = conf.get("checkpoint_ns")
        only_id = get_checkpoint_id(config) if config else None
        before_id = get_checkpoint_id(before) if before else None
        out: list[CheckpointTuple] = []
        if thread_id is not None and ns is not None:
            one = yield from self._dir.find(thread_id, ns)
            sessions = [one] if one is not None else []
        else:
            sessions = yield from self._dir.sessions(thread_id)
        for session in sessions:
            try:
                index = yield from session.sync()
            except SessionNotFound:
                self._dir.forget(session.session_id)
                continue
            if ns is not None and index.ns != ns:
                continue
            for cid in index.ids_newest_first():
                if limit is not None and len(out) >= limit:
                    return out
                if only_id and cid != only_id:
                    continue
                if before_id and cid >= before_id:
                    continue
                record = yield from self._checkpoint_record(session, index, cid)
                if record is None:
                    continue
                metadata = loads_value(self.serde, record["payload"]["metadata"])
                if filter and not all(isinstance(metadata, dict) and metadata.get(k) == v  # as InMemorySaver
                                      for k, v in filter.items()):
                    continue
                out.append((yield from self._tuple(session, index, record, metadata)))
        return out

    def _put_op(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
                new_versions: ChannelVersions) -> Op[RunnableConfig]:
        thread_id, ns = _thread_of(config, "put a checkpoint")
        channel_values = checkpoint.get("channel_values") or {}
        values: list[list[Any]] = []
        for ch, ver in new_versions.items():
            if ch in channel_values:
                values.append([ch, ver, encode_serialized(*dumps_value(self.serde, channel_values[ch]))])
            else:
                values.append([ch, ver, None])
        rest = {k: v for k, v in checkpoint.items() if k != "channel_values"}
        parent_id = (config.get("configurable") or {}).get("checkpoint_id")
        payload = {
            "threadId": thread_id, "ns": ns, "id": checkpoint["id"], "parentId": parent_id or None,
            "checkpoint": encode_serialized(*dumps_value(self.serde, rest)),
            "metadata": encode_serialized(*dumps_value(self.serde, dict(metadata))),
            "values": values,
        }
        session = yield from self._dir.find_or_create(thread_id, ns)
        yield from session.append({"kind": "event", "type": CHECKPOINT_EVENT, "payload": payload})
        return _config(thread_id, ns, checkpoint["id"])

    def _put_writes_op(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                       task_path: str) -> Op[None]:
        thread_id, ns = _thread_of(config, "put writes")
        checkpoint_id = (config.get("configurable") or {}).get("checkpoint_id")
        if not isinstance(checkpoint_id, str) or checkpoint_id == "":
            raise ValueError('Failed to put writes: the RunnableConfig has no "checkpoint_id" in its "configurable".')
        payload = {
            "threadId": thread_id, "ns": ns, "checkpointId": checkpoint_id, "taskId": task_id, "taskPath": task_path,
            "writes": [[WRITES_IDX_MAP.get(ch, i), ch, encode_serialized(*dumps_value(self.serde, v))]
                       for i, (ch, v) in enumerate(writes)],
        }
        session = yield from self._dir.find_or_create(thread_id, ns)
        yield from session.append({"kind": "event", "type": WRITES_EVENT, "payload": payload})

    def _delete_thread_op(self, thread_id: str) -> Op[None]:
        for sid in (yield from self._dir.session_ids_of(thread_id)):
            try:
                yield ("session/delete", {"sessionId": sid})
            except SessionNotFound:
                pass
            self._dir.forget(sid)

    # -- tuples (tuples.ts) ------------------------------------------------------------------

    def _checkpoint_record(self, session: _Session, index: _Index, cid: str) -> Op[dict[str, Any] | None]:
        entry = index.checkpoints.get(cid)
        if entry is None:
            return None
        r = (yield from session.records([entry[0]])).get(entry[0])
        return r if r is not None and r["type"] == CHECKPOINT_EVENT else None

    def _tuple(self, session: _Session, index: _Index, record: dict[str, Any],
               metadata: Any) -> Op[CheckpointTuple]:
        p = record["payload"]
        checkpoint = loads_value(self.serde, p["checkpoint"])
        versions: dict[str, Any] = checkpoint.get("channel_versions") or {}
        wanted = [(ch, ver, index.values.get(_vkey(ch, ver))) for ch, ver in versions.items()]
        recs = yield from session.records([seq for _, _, seq in wanted if seq is not None])
        channel_values: dict[str, Any] = {}
        for ch, ver, seq in wanted:
            r = recs.get(seq) if seq is not None else None
            if r is None or r["type"] != CHECKPOINT_EVENT:
                continue
            for c, v, value in r["payload"]["values"]:
                if c == ch and v == ver:
                    if value is not None:
                        channel_values[ch] = loads_value(self.serde, value)
                    break
        checkpoint["channel_values"] = channel_values
        checkpoint.setdefault("updated_channels", None)
        pending = yield from self._ordered_writes(session, index, p["id"])
        if metadata is None:
            metadata = loads_value(self.serde, p["metadata"])
        parent = p.get("parentId")
        return CheckpointTuple(
            config=_config(p["threadId"], p["ns"], p["id"]),
            checkpoint=cast(Checkpoint, checkpoint),
            metadata=cast(CheckpointMetadata, metadata),
            parent_config=_config(p["threadId"], p["ns"], parent) if parent else None,
            pending_writes=pending,
        )

    def _ordered_writes(self, session: _Session, index: _Index, cid: str) -> Op[list[tuple[str, str, Any]]]:
        seqs = index.writes.get(cid, [])
        recs = yield from session.records(seqs)
        by_key: dict[tuple[str, int], tuple[str, int, str, dict[str, Any], str]] = {}
        for seq in seqs:
            r = recs.get(seq)
            if r is None or r["type"] != WRITES_EVENT:
                continue
            p = r["payload"]
            for idx, ch, value in p["writes"]:
                key = (p["taskId"], idx)
                if idx >= 0 and key in by_key:
                    continue
                by_key[key] = (p["taskId"], idx, ch, value, p["taskPath"])
        ordered = sorted(by_key.values(), key=lambda w: (w[4], w[0], w[1]))
        return [(task_id, ch, loads_value(self.serde, value)) for task_id, _, ch, value, _ in ordered]

    # -- BaseCheckpointSaver ---------------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self._sync(self._get_tuple_op(config))

    def list(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
             before: RunnableConfig | None = None, limit: int | None = None) -> Iterator[CheckpointTuple]:
        yield from self._sync(self._list_op(config, filter, before, limit))

    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        return self._sync(self._put_op(config, checkpoint, metadata, new_versions))

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                   task_path: str = "") -> None:
        self._sync(self._put_writes_op(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        """Moves every session of the thread (all namespaces) to the sidecar's trash (``session/restore`` brings it back)."""
        self._sync(self._delete_thread_op(thread_id))

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self._async(self._get_tuple_op(config))

    async def alist(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
                    before: RunnableConfig | None = None, limit: int | None = None) -> AsyncIterator[CheckpointTuple]:
        for t in await self._async(self._list_op(config, filter, before, limit)):
            yield t

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
                   new_versions: ChannelVersions) -> RunnableConfig:
        return await self._async(self._put_op(config, checkpoint, metadata, new_versions))

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        await self._async(self._put_writes_op(config, writes, task_id, task_path))

    async def adelete_thread(self, thread_id: str) -> None:
        await self._async(self._delete_thread_op(thread_id))
