"""``SidecarSession``: the OpenAI Agents SDK ``Session`` protocol over a sidecar session.

One SidecarSession is one sidecar session. Each item is stored as one record,

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
import os
from typing import Any, Mapping

from .aio import AsyncSidecar
from .errors import NotSupported

ITEM_TYPE = "agents.item"
#: Record kinds the items view is computed from (others are skipped by the server's filter).
VIEW_KINDS = ("event", "rewind", "checkpoint")
_PROBE_AFTER = (1 << 53) - 1  # afterSeq past any lastSeq: an empty page that tells lastSeq


class SidecarSession:
    """An Agents SDK session (``get_items``, ``add_items``, ``pop_item``, ``clear_session``).

    Args:
        session_id: an existing sidecar session to continue (opened for writing at first
            use); None creates a new session at first use (``session_id`` is "" until then;
            ``await start()`` creates it at once and returns the id).
        store: the store for a sidecar this session spawns (when ``sidecar`` is None); the
            command is found as for ``AsyncSidecar`` (SESSION_SIDECAR_COMMAND, PATH).
        sidecar: an ``AsyncSidecar`` to use (shared; ``close()`` then closes only the session,
            not the process). Started here if it was not yet.
        secrets: ``{env?, values?}`` registered on the session at create/open (protocol §10):
            an item holding one is refused with SecretRejected and nothing is stored.
    """

    def __init__(self, session_id: str | None = None, store: str | os.PathLike[str] | None = None,
                 sidecar: AsyncSidecar | None = None, *, secrets: Mapping[str, Any] | None = None) -> None:
        if sidecar is not None and not isinstance(sidecar, AsyncSidecar):
            raise TypeError("sidecar must be an AsyncSidecar")
        self._id = session_id
        self._store = store
        self._sidecar = sidecar
        self._owns = sidecar is None
        self._secrets = dict(secrets) if secrets is not None else None
        self._opened = False
        self._closed = False
        self._lock = asyncio.Lock()

    @property
    def session_id(self) -> str:
        """The sidecar session id ("" before a new session is created at first use)."""
        return self._id or ""

    @property
    def sidecar(self) -> AsyncSidecar | None:
        return self._sidecar

    async def start(self) -> str:
        """Spawns/opens what is needed now (else done at the first call); returns the session id."""
        async with self._lock:
            await self._ensure()
        return self.session_id

    # -- the Session protocol ---------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The session's items, oldest first; with ``limit``, the latest ``limit`` of them."""
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
                if self._opened and self._id is not None and sc.returncode is None:
                    await sc.close(self._id)
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
            if self._id is None:
                params: dict[str, Any] = {"metadata": {"client": "session_sidecar.SidecarSession"}}
                if self._secrets is not None:
                    params["secrets"] = self._secrets
                self._id = (await sc.create(**params))["sessionId"]
            else:
                await sc.open(self._id, "write", secrets=self._secrets)
            self._opened = True
        return sc

    def _require_id(self) -> str:
        assert self._id is not None
        return self._id

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
