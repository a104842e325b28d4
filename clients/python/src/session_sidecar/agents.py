"""``SidecarSession``: the OpenAI Agents SDK ``Session`` protocol over a sidecar session.

One SidecarSession is one sidecar session. Its ``session_id`` is the caller's, as in the SDK
(``SidecarSession("conversation_123")`` as ``SQLiteSession("conversation_123")``): the id is
mapped to a ``session/create`` idempotencyKey (``idempotency_key_for``), so the session is
created the first time and found every later time, in any process and after a crash
(docs/ADAPTERS.md). Each item is stored as one record,

    {"kind": "event", "type": "agents.item", "payload": <the item>}

so that ``session/read`` returns it exactly (an ``event`` payload is kept as sent, member order
included; a ``message`` record would reorder members, see protocol/README.md §5.1). Nothing is
ever deleted: ``pop_item`` and ``clear_session`` append a ``rewind`` record (``session/rewind``,
capability ``session.rewind``). The items of the session are computed as the server computes
its context: the items view as of a position P is, when the last ``rewind`` record R at or
before P exists, the view as of ``R.toSeq`` plus the items after R up to P; else every item up
to P. A ``checkpoint`` (compaction) ends the view: what it summarized is not an item any more.
``get_items(limit)`` walks back from ``lastSeq`` in growing windows (``afterSeq`` near the end),
following rewinds, and stops once it has ``limit`` items: it never reads the whole session.
"""

from __future__ import annotations

import asyncio
import bisect
import hashlib
import os
import re
from typing import Any, Mapping, Sequence

from .aio import AsyncSidecar
from .errors import Conflict, NotSupported, SessionNotFound

ITEM_TYPE = "agents.item"
#: Record kinds the items view is computed from (others are skipped by the server's filter).
VIEW_KINDS = ("event", "rewind", "checkpoint")
_PROBE_AFTER = (1 << 53) - 1  # afterSeq past any lastSeq: an empty page that tells lastSeq
#: The id of a sidecar session (session/create makes ULIDs).
ULID = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")
KEY_PREFIX = "agents.session:"
HASHED_KEY_PREFIX = "agents.session.sha256:"
CLIENT_MARK = "session_sidecar.SidecarSession"


def idempotency_key_for(session_id: str) -> str:
    """The ``session/create`` idempotencyKey a caller-chosen session id maps to.

    ``agents.session:<id>`` when that is a valid key (printable ASCII, at most 128 characters),
    else ``agents.session.sha256:<hex of the id's UTF-8 bytes>``. The JS SidecarSession
    (src/adapters/openaiAgents) maps ids the same way, so both find the same session.
    """
    key = KEY_PREFIX + session_id
    if len(key) <= 128 and all(" " <= ch <= "~" for ch in key):
        return key
    return HASHED_KEY_PREFIX + hashlib.sha256(session_id.encode("utf-8")).hexdigest()


class SidecarSession:
    """An Agents SDK session (``get_items``, ``add_items``, ``pop_item``, ``clear_session``).

    Args:
        session_id: the conversation's id, of the caller's choosing (as ``SQLiteSession``'s):
            the session it names is found or, the first time, created. The id of a sidecar
            session itself (a ULID, ``sidecar_session_id``) continues that session. Any other
            string is mapped to a ``session/create`` idempotencyKey (``idempotency_key_for``):
            a create with that key answers the session created with it before — in any
            process, after a crash — so one id is always one session. None: a new anonymous
            session, created at first use (``session_id`` is "" until then and its ULID after).
        store: the store for a sidecar this session spawns (when ``sidecar`` is None); the
            command is found as for ``AsyncSidecar`` (SESSION_SIDECAR_COMMAND, PATH).
        sidecar: an ``AsyncSidecar`` to use (shared; ``close()`` then closes only the session,
            not the process). Started here if it was not yet.
        title / tags / metadata: the header of a session created here (``session/list``
            shows the title and filters by tags); an existing session keeps its own.
        secrets: ``{env?, values?}`` registered on the session at create/open (protocol §10):
            an item holding one is refused with SecretRejected and nothing is stored.
        session_settings: the SDK's ``SessionSettings`` (or None): its ``limit`` is the
            default of ``get_items(limit=None)``.
    """

    session_id: str
    session_settings: Any

    def __init__(self, session_id: str | None = None, store: str | os.PathLike[str] | None = None,
                 sidecar: AsyncSidecar | None = None, *, title: str | None = None,
                 tags: Sequence[str] | None = None, metadata: Mapping[str, Any] | None = None,
                 secrets: Mapping[str, Any] | None = None, session_settings: Any = None) -> None:
        if sidecar is not None and not isinstance(sidecar, AsyncSidecar):
            raise TypeError("sidecar must be an AsyncSidecar")
        if session_id is not None and (not isinstance(session_id, str) or session_id == ""):
            raise ValueError("session_id must be a non-empty string (or None for a new session)")
        if isinstance(tags, str):
            raise TypeError("tags must be a sequence of strings, not a string")
        self.session_id = session_id or ""
        self.session_settings = session_settings
        self._sid: str | None = None  # the sidecar session's id, once created or opened
        self._store = store
        self._sidecar = sidecar
        self._owns = sidecar is None
        self._title = title
        self._tags = list(tags) if tags is not None else None
        self._metadata = dict(metadata) if metadata is not None else None
        self._secrets = dict(secrets) if secrets is not None else None
        self._opened = False
        self._closed = False
        self._lock = asyncio.Lock()

    @classmethod
    async def open(cls, session_id: str | None = None, store: str | os.PathLike[str] | None = None,
                   sidecar: AsyncSidecar | None = None, *, title: str | None = None,
                   tags: Sequence[str] | None = None, metadata: Mapping[str, Any] | None = None,
                   secrets: Mapping[str, Any] | None = None, session_settings: Any = None) -> "SidecarSession":
        """Finds or creates the session now (the constructor does it at first use) and returns it.

        ``await SidecarSession.open(session_id="conversation_123", store=...)`` is the sidecar's
        ``SQLiteSession("conversation_123", db_path)``.
        """
        s = cls(session_id, store, sidecar, title=title, tags=tags, metadata=metadata,
                secrets=secrets, session_settings=session_settings)
        try:
            await s.start()
        except BaseException:
            await s.close()
            raise
        return s

    @property
    def sidecar_session_id(self) -> str:
        """The sidecar session's id, a ULID ("" before the session is found or created)."""
        return self._sid or ""

    @property
    def sidecar(self) -> AsyncSidecar | None:
        return self._sidecar

    async def start(self) -> str:
        """Spawns/opens what is needed now (else done at the first call); returns ``session_id``."""
        async with self._lock:
            await self._ensure()
        return self.session_id

    # -- the Session protocol ---------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The session's items, oldest first; with ``limit``, the latest ``limit`` of them.

        ``limit=None`` takes ``session_settings.limit`` when set (as the SDK's sessions do).
        """
        if limit is None and self.session_settings is not None:
            limit = getattr(self.session_settings, "limit", None)
            if limit is None and isinstance(self.session_settings, Mapping):
                limit = self.session_settings.get("limit")
        async with self._lock:
            sc = await self._ensure()
            if limit is not None and limit <= 0:
                return []
            items, _ = await self._tail(sc, limit)
            return [item for _, item in items]

    async def add_items(self, items: list[Any]) -> None:
        """Appends each item as one record, durably (answered after fdatasync / COMMIT).

        Up to ``maxRecords`` items go in one all-or-nothing append; a longer list is appended
        in several.
        """
        if not items:
            return
        async with self._lock:
            sc = await self._ensure()
            records = [{"kind": "event", "type": ITEM_TYPE, "payload": item} for item in items]
            step = int(sc.capabilities.get("session", {}).get("append", {}).get("maxRecords") or 10000)
            for i in range(0, len(records), step):
                await sc.append(self._require_id(), records[i:i + step])

    async def pop_item(self) -> Any | None:
        """Removes the latest item from the view and returns it (None when there is none).

        Appends ``rewind {toSeq: <its seq> - 1}`` with ``expectedLastSeq`` (Conflict if the
        session changed meanwhile); the item's record stays in the journal.
        """
        async with self._lock:
            sc = await self._ensure()
            self._require_rewind(sc)
            items, last_seq = await self._tail(sc, 1)
            if not items:
                return None
            seq, item = items[-1]
            await sc.rewind(self._require_id(), seq - 1, expected_last_seq=last_seq)
            return item

    async def clear_session(self) -> None:
        """Empties the view: ``rewind`` to the start (0, or the checkpoint after a compaction).

        No rewind is appended when there are no items.
        """
        async with self._lock:
            sc = await self._ensure()
            self._require_rewind(sc)
            items, last_seq = await self._tail(sc, 1)
            if not items:
                return
            await sc.rewind(self._require_id(), await self._floor(sc), expected_last_seq=last_seq)

    async def close(self) -> None:
        """Closes the session in the sidecar; stops the sidecar if this object spawned it."""
        async with self._lock:
            if self._closed:
                return
            self._closed = True
            sc = self._sidecar
            if sc is None:
                return
            try:
                if self._opened and self._sid is not None and sc.returncode is None:
                    await sc.close(self._sid)
            finally:
                if self._owns:
                    await sc.stop()

    async def __aenter__(self) -> "SidecarSession":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- internals --------------------------------------------------------------------------

    async def _ensure(self) -> AsyncSidecar:
        if self._closed:
            raise RuntimeError("this SidecarSession is closed")
        if self._sidecar is None:
            self._sidecar = AsyncSidecar(store=self._store)
        sc = self._sidecar
        if sc.proc is None:
            await sc.start()
        if not self._opened:
            self._sid = await self._find_or_create(sc)
            if not self.session_id:
                self.session_id = self._sid
            self._opened = True
        return sc

    async def _find_or_create(self, sc: AsyncSidecar) -> str:
        """The sidecar session for ``session_id``, opened for writing here (see the class doc)."""
        caller_id = self.session_id
        if caller_id and ULID.fullmatch(caller_id):
            try:
                return str((await sc.open(caller_id, "write", secrets=self._secrets))["sessionId"])
            except SessionNotFound:
                pass  # not a sidecar session's id: a caller-chosen id like any other
        metadata: dict[str, Any] = dict(self._metadata or {})
        metadata.setdefault("client", CLIENT_MARK)
        params: dict[str, Any] = {"metadata": metadata}
        if self._title is not None:
            params["title"] = self._title
        if self._tags is not None:
            params["tags"] = self._tags
        if self._secrets is not None:
            params["secrets"] = self._secrets
        if not caller_id:
            return str((await sc.create(**params))["sessionId"])
        metadata.setdefault("agentsSessionId", caller_id)
        if not sc.capabilities.get("session", {}).get("idempotencyKey", {}).get("create"):
            raise NotSupported(None, "this sidecar does not advertise capabilities.session.idempotencyKey.create: "
                                     "a session id of the caller's choosing needs session/create's idempotencyKey")
        try:
            return str((await sc.create(idempotency_key=idempotency_key_for(caller_id), **params))["sessionId"])
        except Conflict as e:
            # Created before with another title/tags/metadata: that session is this id's.
            data = e.data if isinstance(e.data, Mapping) else {}
            original = data.get("sessionId")
            if data.get("reason") != "idempotencyKeyReused" or not isinstance(original, str):
                raise
            await sc.open(original, "write", secrets=self._secrets)
            return original

    def _require_id(self) -> str:
        assert self._sid is not None
        return self._sid

    @staticmethod
    def _require_rewind(sc: AsyncSidecar) -> None:
        if not sc.capabilities.get("session", {}).get("rewind"):
            raise NotSupported(None, "this sidecar does not advertise capabilities.session.rewind: "
                                     "pop_item and clear_session need session/rewind")

    async def _range(self, sc: AsyncSidecar, lo: int, hi: int) -> list[dict[str, Any]]:
        """The view-relevant records with lo < seq <= hi, oldest first (blobs inlined)."""
        out: list[dict[str, Any]] = []
        cursor = lo
        while cursor < hi:
            page = await sc.read(self._require_id(), after_seq=cursor, limit=min(hi - cursor, 10000),
                                 kinds=VIEW_KINDS, inline=True)
            out.extend(r for r in page["records"] if r["seq"] <= hi)
            nxt = page.get("nextAfterSeq")
            if nxt is None or nxt <= cursor:
                break
            cursor = nxt
        return out

    async def _tail(self, sc: AsyncSidecar, limit: int | None) -> tuple[list[tuple[int, Any]], int]:
        """The latest ``limit`` items (all when None) as (seq, item), oldest first, and the
        session's lastSeq when the walk began."""
        sid = self._require_id()
        last_seq = int((await sc.read(sid, after_seq=_PROBE_AFTER, limit=1))["lastSeq"])
        found: list[tuple[int, Any]] = []  # newest first
        window = 64 if limit is None else max(2 * limit, 16)
        pos = last_seq
        chunk: list[dict[str, Any]] = []
        seqs: list[int] = []
        chunk_lo = chunk_hi = -1
        while pos > 0 and (limit is None or len(found) < limit):
            if not (chunk_lo < pos <= chunk_hi):
                chunk_lo, chunk_hi = max(0, pos - window), pos
                chunk = await self._range(sc, chunk_lo, chunk_hi)
                seqs = [r["seq"] for r in chunk]
                window *= 2
            idx = bisect.bisect_right(seqs, pos) - 1
            next_pos = chunk_lo  # nothing above chunk_lo left to examine: go on below it
            while idx >= 0:
                r = chunk[idx]
                if r["kind"] == "rewind":
                    next_pos = int(r["toSeq"])  # the view as of toSeq, before this rewind
                    break
                if r["kind"] == "checkpoint":
                    next_pos = 0  # what a checkpoint summarized holds no items
                    break
                if r["kind"] == "event" and r.get("type") == ITEM_TYPE:
                    found.append((int(r["seq"]), r.get("payload")))
                    if limit is not None and len(found) >= limit:
                        break
                idx -= 1
            if limit is not None and len(found) >= limit:
                break
            pos = next_pos
        found.reverse()
        return found, last_seq

    async def _floor(self, sc: AsyncSidecar) -> int:
        """The lowest seq a rewind may go to: the active journal's checkpoint, or 0."""
        page = await sc.read(self._require_id(), limit=1)
        first = page["records"][0] if page["records"] else None
        return int(first["seq"]) if first is not None and first["kind"] == "checkpoint" else 0
