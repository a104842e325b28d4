"""SidecarSession (the OpenAI Agents SDK Session protocol) against the real binary, plus the
items view over rewind records against a reference model (the binary of main has no rewind).

pop_item / clear_session need session/rewind: those tests are skipped, with the reason printed,
when the sidecar under test does not advertise capabilities.session.rewind.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import random
import unittest
from typing import Any

from helpers import FRAMING, REWIND_SKIP, command, has_rewind, temp_store

import session_sidecar as ss
from session_sidecar import ITEM_TYPE, AsyncSidecar, SidecarSession

SECRET = "s3cr3t-Value-0123456789"


def items_sample() -> list[Any]:
    """Agents SDK input items, members in the order the SDK writes them (and some unusual ones)."""
    return [
        {"role": "user", "content": "What's the weather in Zürich? ☀️"},
        {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
         "content": [{"type": "output_text", "text": "Let me check.", "annotations": []}]},
        {"type": "function_call", "call_id": "call_1", "name": "weather", "arguments": "{\"city\":\"Zürich\"}",
         "id": "fc_1", "status": "completed"},
        {"type": "function_call_output", "call_id": "call_1", "output": "{\"c\": 21, \"ok\": true}"},
        {"zeta": None, "alpha": [1, -2, 3.5, True, False, {"nested": {"z": 1, "a": 2}}], "empty": {}, "list": []},
        {"role": "assistant", "content": "x" * 300_000},  # stored as a blob reference, read back inlined
    ]


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class SidecarSessionTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        self.store = temp_store(self)
        self.sc = AsyncSidecar(store=self.store, command=command(), framing=FRAMING)
        await self.sc.start()
        self.addAsyncCleanup(self.sc.stop)

    async def journal(self, sid: str) -> list[dict[str, Any]]:
        return await self.sc.read_all(sid)

    async def test_it_has_the_session_protocol_shape(self) -> None:
        s = SidecarSession(sidecar=self.sc)
        self.assertEqual(s.session_id, "", "no id before the session is created")
        for name, params in (("get_items", ["limit"]), ("add_items", ["items"]), ("pop_item", []), ("clear_session", [])):
            fn = getattr(s, name)
            self.assertTrue(inspect.iscoroutinefunction(fn), name)
            self.assertEqual(list(inspect.signature(fn).parameters), params, name)
        self.assertIsNone(inspect.signature(s.get_items).parameters["limit"].default)
        self.assertEqual(list(inspect.signature(SidecarSession).parameters)[:3], ["session_id", "store", "sidecar"])
        sid = await s.start()
        self.assertEqual(s.session_id, sid)
        self.assertTrue(sid)
        await s.close()

    async def test_items_round_trip_byte_for_byte(self) -> None:
        s = SidecarSession(sidecar=self.sc)
        sent = items_sample()
        await s.add_items(sent[:2])
        await s.add_items(sent[2:])
        await s.add_items([])
        got = await s.get_items()
        self.assertEqual([dumps(i) for i in got], [dumps(i) for i in sent], "same values, same member order")
        # Each item is one event record whose payload session/read returns exactly.
        records = await self.sc.read_all(s.session_id)
        self.assertEqual([(r["kind"], r["type"]) for r in records], [("event", ITEM_TYPE)] * len(sent))
        inlined = (await self.sc.read(s.session_id, inline=True))["records"]
        self.assertEqual([dumps(r["payload"]) for r in inlined], [dumps(i) for i in sent])
        # An event payload is not a BlobRef position (protocol §15.4): the 300 KB string stays in the record.
        self.assertEqual(dumps(records[-1]["payload"]), dumps(sent[-1]), "the 300 KB string is inline, not a blob")
        await s.close()

    async def test_get_items_limit_returns_the_latest_in_order(self) -> None:
        s = SidecarSession(sidecar=self.sc)
        await s.add_items([{"n": i} for i in range(10)])
        self.assertEqual(await s.get_items(3), [{"n": 7}, {"n": 8}, {"n": 9}])
        self.assertEqual(await s.get_items(1), [{"n": 9}])
        self.assertEqual(await s.get_items(50), [{"n": i} for i in range(10)])
        self.assertEqual(await s.get_items(0), [])
        self.assertEqual(await s.get_items(), [{"n": i} for i in range(10)])
        await s.close()

    async def test_get_items_with_a_limit_reads_only_near_the_end(self) -> None:
        s = SidecarSession(sidecar=self.sc)
        await s.add_items([{"n": i} for i in range(3000)])
        # Other records of the session are not items and are skipped.
        await self.sc.append(s.session_id, [{"kind": "message", "message": {"role": "user", "content": "m"}}])
        reads: list[dict[str, Any]] = []
        real_read = self.sc.read

        async def spy(*args: Any, **kw: Any) -> dict[str, Any]:
            page = await real_read(*args, **kw)
            reads.append(page)
            return page

        self.sc.read = spy  # type: ignore[method-assign]
        try:
            self.assertEqual(await s.get_items(5), [{"n": i} for i in range(2995, 3000)])
        finally:
            del self.sc.read
        seqs = [r["seq"] for page in reads for r in page["records"]]
        self.assertLessEqual(len(seqs), 40, "a few dozen records read, not 3001")
        self.assertGreater(min(seqs), 2900, "nothing read from the start of the session")
        await s.close()

    async def test_items_survive_a_new_process(self) -> None:
        async with SidecarSession(sidecar=self.sc) as s:
            await s.add_items(items_sample()[:4])
            sid = s.session_id
        other = AsyncSidecar(store=self.store, command=command(), framing=FRAMING)
        await self.sc.stop()  # one writer at a time: the first process is gone
        async with other:
            s2 = SidecarSession(session_id=sid, sidecar=other)
            self.assertEqual([dumps(i) for i in await s2.get_items()], [dumps(i) for i in items_sample()[:4]])
            await s2.add_items([{"role": "user", "content": "again"}])
            self.assertEqual((await s2.get_items(1)), [{"role": "user", "content": "again"}])
            await s2.close()
            self.assertIsNone(other.returncode, "close() leaves a sidecar it was given running")

    async def test_registered_secrets_are_refused_and_nothing_is_stored(self) -> None:
        s = SidecarSession(sidecar=self.sc, secrets={"values": [SECRET]})
        await s.add_items([{"role": "user", "content": "fine"}])
        with self.assertRaises(ss.SecretRejected) as cm:
            await s.add_items([{"role": "user", "content": "ok"}, {"role": "user", "content": f"token {SECRET}"}])
        self.assertNotIn(SECRET, str(cm.exception) + repr(cm.exception.data))
        self.assertEqual(await s.get_items(), [{"role": "user", "content": "fine"}])
        self.assertEqual(len(await self.journal(s.session_id)), 1, "the whole batch was refused")
        await s.close()

    async def test_a_session_given_only_a_store_spawns_and_stops_its_sidecar(self) -> None:
        s = SidecarSession(store=self.store)  # the command comes from SESSION_SIDECAR_COMMAND
        await s.add_items([{"role": "user", "content": "hi"}])
        own = s.sidecar
        assert own is not None and own is not self.sc
        self.assertEqual(await s.get_items(), [{"role": "user", "content": "hi"}])
        await s.close()
        self.assertEqual(own.returncode, 0, "close() shut down the sidecar it spawned")
        with self.assertRaises(RuntimeError):
            await s.get_items()
        self.assertEqual(len(await self.journal(s.session_id)), 1, "durable, readable by another process")

    async def test_an_unknown_ulid_is_a_caller_chosen_id_like_any_other(self) -> None:
        ulid = "01ZZZZZZZZZZZZZZZZZZZZZZZZ"
        s = await SidecarSession.open(session_id=ulid, sidecar=self.sc)
        self.assertEqual(s.session_id, ulid)
        self.assertNotEqual(s.sidecar_session_id, ulid, "a new session, keyed by the id")
        await s.add_items([{"n": 1}])
        await s.close()
        again = await SidecarSession.open(session_id=ulid, sidecar=self.sc)
        self.assertEqual(again.sidecar_session_id, s.sidecar_session_id)
        self.assertEqual(await again.get_items(), [{"n": 1}])
        await again.close()

    # -- session ids of the caller's choosing ------------------------------------------------

    async def test_a_caller_chosen_id_is_found_or_created(self) -> None:
        s = await SidecarSession.open(session_id="conversation_123", sidecar=self.sc, title="Trip to Zürich", tags=["agents", "demo"])
        self.assertEqual(s.session_id, "conversation_123", "the SDK's session_id is the caller's")
        self.assertRegex(s.sidecar_session_id, r"^[0-9A-HJKMNP-TV-Z]{26}$")
        sent = items_sample()[:4]
        await s.add_items(sent)
        await s.close()
        # The same id again — here, with another title (the session keeps its own), and in a
        # new process: the same session.
        again = await SidecarSession.open(session_id="conversation_123", sidecar=self.sc)
        self.assertEqual(again.sidecar_session_id, s.sidecar_session_id)
        self.assertEqual([dumps(i) for i in await again.get_items()], [dumps(i) for i in sent])
        await again.close()
        await self.sc.stop()
        async with AsyncSidecar(store=self.store, command=command(), framing=FRAMING) as other:
            third = SidecarSession("conversation_123", sidecar=other, title="another title", tags=["x"])
            self.assertEqual(await third.get_items(2), sent[2:], "the constructor finds it at first use")
            self.assertEqual(third.sidecar_session_id, s.sidecar_session_id)
            await third.add_items([{"role": "user", "content": "and tomorrow?"}])
            await third.close()
            listed = {x["sessionId"]: x for x in (await other.list())["sessions"]}
            self.assertEqual(len(listed), 1, "one id, one session")
            self.assertEqual(listed[s.sidecar_session_id]["title"], "Trip to Zürich")
            self.assertEqual(sorted(listed[s.sidecar_session_id]["tags"]), ["agents", "demo"])
            opened = await other.open(s.sidecar_session_id, "read")
            self.assertEqual(opened["metadata"], {"client": "session_sidecar.SidecarSession", "agentsSessionId": "conversation_123"})
            records = await other.read_all(s.sidecar_session_id)
            self.assertEqual(len(records), 5)

    async def test_distinct_ids_are_distinct_sessions_and_any_string_is_an_id(self) -> None:
        ids = ["conversation_123", "conversation_124", "Zürich ☀️ / chat", "x" * 500, "agents.session:conversation_123", " "]
        sessions = [await SidecarSession.open(session_id=i, sidecar=self.sc) for i in ids]
        for i, s in enumerate(sessions):
            await s.add_items([{"i": i}])
        sids = [s.sidecar_session_id for s in sessions]
        self.assertEqual(len(set(sids)), len(ids))
        for s in sessions:
            await s.close()
        for i, name in enumerate(ids):
            s = await SidecarSession.open(session_id=name, sidecar=self.sc)
            self.assertEqual(s.sidecar_session_id, sids[i], name)
            self.assertEqual(await s.get_items(), [{"i": i}], name)
            await s.close()
        self.assertEqual(ss.idempotency_key_for("conversation_123"), "agents.session:conversation_123")
        self.assertTrue(ss.idempotency_key_for("x" * 500).startswith("agents.session.sha256:"))
        self.assertTrue(ss.idempotency_key_for("Zürich").startswith("agents.session.sha256:"))
        with self.assertRaises(ValueError):
            SidecarSession(session_id="")

    async def test_the_ulid_of_a_session_continues_it(self) -> None:
        a = await SidecarSession.open(sidecar=self.sc)
        self.assertEqual(a.session_id, a.sidecar_session_id)
        await a.add_items([{"n": 1}])
        await a.close()
        b = await SidecarSession.open(session_id=a.session_id, sidecar=self.sc)
        self.assertEqual(b.sidecar_session_id, a.sidecar_session_id)
        self.assertEqual(await b.get_items(), [{"n": 1}])
        await b.close()

    async def test_a_caller_chosen_id_survives_sigkill_between_turns(self) -> None:
        store = temp_store(self)
        s = await SidecarSession.open(session_id="conversation_kill", store=store)
        await s.add_items([{"role": "user", "content": "turn 1"}, {"role": "assistant", "content": "reply 1"}])
        sid = s.sidecar_session_id
        own = s.sidecar
        assert own is not None
        self.assertEqual(await own.kill(), -9)  # SIGKILL: no shutdown, no close
        with self.assertRaises(ss.SidecarExited):
            await s.get_items()
        await s.close()
        s2 = await SidecarSession.open(session_id="conversation_kill", store=store)
        self.assertEqual(s2.sidecar_session_id, sid)
        self.assertEqual(await s2.get_items(), [{"role": "user", "content": "turn 1"}, {"role": "assistant", "content": "reply 1"}])
        await s2.close()

    async def test_session_settings_limit_is_the_default_limit(self) -> None:
        class Settings:
            limit = 2
        s = await SidecarSession.open(session_id="limited", sidecar=self.sc, session_settings=Settings())
        await s.add_items([{"n": i} for i in range(5)])
        self.assertEqual(await s.get_items(), [{"n": 3}, {"n": 4}])
        self.assertEqual(await s.get_items(4), [{"n": i} for i in range(1, 5)])
        s.session_settings = {"limit": 1}
        self.assertEqual(await s.get_items(), [{"n": 4}])
        await s.close()

    @unittest.skipIf(has_rewind(), "the sidecar under test has session/rewind")
    async def test_pop_and_clear_need_rewind(self) -> None:
        s = SidecarSession(sidecar=self.sc)
        await s.add_items([{"n": 1}])
        with self.assertRaises(ss.NotSupported):
            await s.pop_item()
        with self.assertRaises(ss.NotSupported):
            await s.clear_session()
        self.assertEqual(await s.get_items(), [{"n": 1}], "nothing changed")
        await s.close()

    @unittest.skipUnless(has_rewind(), REWIND_SKIP)
    async def test_pop_item_rewinds_and_keeps_the_bytes(self) -> None:
        s = SidecarSession(sidecar=self.sc)
        self.assertIsNone(await s.pop_item(), "empty session")
        await s.add_items([{"n": 1}, {"n": 2}, {"n": 3}])
        self.assertEqual(await s.pop_item(), {"n": 3})
        self.assertEqual(await s.get_items(), [{"n": 1}, {"n": 2}])
        await s.add_items([{"n": 4}])
        self.assertEqual(await s.pop_item(), {"n": 4})
        self.assertEqual(await s.pop_item(), {"n": 2})
        self.assertEqual(await s.get_items(), [{"n": 1}])
        self.assertEqual(await s.get_items(5), [{"n": 1}])
        journal = await self.journal(s.session_id)
        self.assertEqual([r["payload"]["n"] for r in journal if r["kind"] == "event"], [1, 2, 3, 4], "no byte deleted")
        self.assertEqual(sum(r["kind"] == "rewind" for r in journal), 3)
        self.assertEqual(await s.pop_item(), {"n": 1})
        self.assertIsNone(await s.pop_item())
        await s.close()

    @unittest.skipUnless(has_rewind(), REWIND_SKIP)
    async def test_clear_session_rewinds_to_the_start(self) -> None:
        s = SidecarSession(sidecar=self.sc)
        await s.clear_session()
        self.assertEqual(await self.journal(s.session_id), [], "clearing an empty session appends nothing")
        await s.add_items([{"n": 1}, {"n": 2}])
        await s.clear_session()
        self.assertEqual(await s.get_items(), [])
        self.assertIsNone(await s.pop_item())
        await s.add_items([{"n": 3}])
        self.assertEqual(await s.get_items(), [{"n": 3}])
        journal = await self.journal(s.session_id)
        self.assertEqual([r["payload"]["n"] for r in journal if r["kind"] == "event"], [1, 2, 3])
        # After a compaction the start is the checkpoint.
        last = journal[-1]["seq"]
        await self.sc.compact(s.session_id, "earlier items", last - 1)
        self.assertEqual(await s.get_items(), [{"n": 3}])
        await s.clear_session()
        self.assertEqual(await s.get_items(), [])
        await s.close()


# -- the items view over rewind records, against a reference model ---------------------------

class FakeReader:
    """Just enough of AsyncSidecar.read for SidecarSession._tail: a journal of records with the
    session/read paging rules (afterSeq, limit, kinds, nextAfterSeq), counting what it returns."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.records = records
        self.returned = 0
        self.calls = 0

    async def read(self, session_id: str, after_seq: int | None = None, limit: int | None = None,
                   kinds: Any = None, inline: bool = False) -> dict[str, Any]:
        self.calls += 1
        last = self.records[-1]["seq"] if self.records else 0
        after = after_seq or 0
        out: list[dict[str, Any]] = []
        examined = after
        for r in self.records:
            if r["seq"] <= after:
                continue
            examined = r["seq"]
            if kinds is None or r["kind"] in kinds:
                out.append(r)
                if len(out) >= (limit or 1000):
                    break
        self.returned += len(out)
        return {"records": out, "lastSeq": last, "nextAfterSeq": None if examined >= last else examined}


def reference_view(records: list[dict[str, Any]], pos: int) -> list[int]:
    """The item seqs visible as of ``pos``, straight from the definition (protocol §17.2)."""
    upto = [r for r in records if r["seq"] <= pos]
    rewinds = [r for r in upto if r["kind"] == "rewind"]
    if not rewinds:
        return [r["seq"] for r in upto if r["kind"] == "event"]
    last = rewinds[-1]
    return reference_view(records, last["toSeq"]) + [r["seq"] for r in upto if r["kind"] == "event" and r["seq"] > last["seq"]]


class ItemsViewOverRewinds(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        asyncio.get_running_loop().slow_callback_duration = 60  # many quick walks in one step; not a timing test

    def journal(self, rng: random.Random, n: int) -> list[dict[str, Any]]:
        records: list[dict[str, Any]] = []
        for seq in range(1, n + 1):
            roll = rng.random()
            if roll < 0.15 and seq > 1:
                records.append({"seq": seq, "kind": "rewind", "toSeq": rng.randrange(0, seq)})
            elif roll < 0.25:
                records.append({"seq": seq, "kind": "message", "message": {"role": "user"}})
            else:
                records.append({"seq": seq, "kind": "event", "type": ITEM_TYPE, "payload": {"seq": seq}})
        return records

    async def tail(self, records: list[dict[str, Any]], limit: int | None) -> tuple[list[int], FakeReader]:
        fake = FakeReader(records)
        s = SidecarSession(session_id="x")
        s._sid = "x"
        items, last = await s._tail(fake, limit)  # type: ignore[arg-type]
        self.assertEqual(last, records[-1]["seq"] if records else 0)
        self.assertEqual([seq for seq, _ in items], [item["seq"] for _, item in items])
        return [seq for seq, _ in items], fake

    async def test_random_journals_match_the_reference(self) -> None:
        rng = random.Random(19)
        for case in range(300):
            records = self.journal(rng, rng.randrange(0, 120))
            want = reference_view(records, records[-1]["seq"] if records else 0)
            for limit in (None, 1, 2, 5, 50):
                with self.subTest(case=case, limit=limit):
                    got, _ = await self.tail(records, limit)
                    self.assertEqual(got, want if limit is None else want[-limit:])

    async def test_a_rewind_into_an_undone_range_restores_that_past(self) -> None:
        ev = lambda seq: {"seq": seq, "kind": "event", "type": ITEM_TYPE, "payload": {"seq": seq}}  # noqa: E731
        records = [ev(1), ev(2), ev(3), {"seq": 4, "kind": "rewind", "toSeq": 1}, ev(5),
                   {"seq": 6, "kind": "rewind", "toSeq": 3}, ev(7)]
        got, _ = await self.tail(records, None)
        self.assertEqual(got, [1, 2, 3, 7], "as of seq 3 (before the first rewind), then 7")

    async def test_a_checkpoint_ends_the_view(self) -> None:
        ev = lambda seq: {"seq": seq, "kind": "event", "type": ITEM_TYPE, "payload": {"seq": seq}}  # noqa: E731
        records = [{"seq": 10, "kind": "checkpoint"}, ev(11), {"seq": 12, "kind": "rewind", "toSeq": 10}, ev(13)]
        got, _ = await self.tail(records, None)
        self.assertEqual(got, [13])
        # The active journal of a compacted session starts at its checkpoint: the walk stops
        # there instead of paging down through the archived seqs.
        records = [{"seq": 1_000_000, "kind": "checkpoint"}, ev(1_000_001)]
        got, fake = await self.tail(records, None)
        self.assertEqual(got, [1_000_001])
        self.assertLessEqual(fake.calls, 3, "the lastSeq probe and one window")

    async def test_a_long_journal_is_read_from_the_end_only(self) -> None:
        records = self.journal(random.Random(7), 20000)
        _, fake = await self.tail(records, 10)
        self.assertLess(fake.returned, 400, f"records read for 10 items: {fake.returned}")


if __name__ == "__main__":
    unittest.main()
