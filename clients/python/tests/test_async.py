"""AsyncSidecar against the real binary: pipelining, notifications as an async iterator, clean
shutdown, typed errors, and the process's death failing every pending request."""

from __future__ import annotations

import asyncio
import unittest
from typing import Any

from helpers import FRAMING, command, temp_store

import session_sidecar as ss
from session_sidecar import AsyncSidecar


def msg(text: str) -> dict[str, Any]:
    return {"kind": "message", "message": {"role": "user", "content": text}}


class AsyncSidecarTest(unittest.IsolatedAsyncioTestCase):
    def make(self, **kw: Any) -> AsyncSidecar:
        return AsyncSidecar(store=temp_store(self), command=command(), framing=FRAMING, **kw)

    async def test_lifecycle_and_clean_shutdown(self) -> None:
        async with self.make() as sc:
            self.assertEqual((sc.server_info or {})["protocolVersion"], 1)
            self.assertIn(FRAMING, sc.capabilities["framings"])
            sid = (await sc.create(title="t"))["sessionId"]
            self.assertEqual(await sc.append(sid, [msg("a"), msg("b")]), {"firstSeq": 1, "lastSeq": 2})
            self.assertEqual([r["message"]["content"] for r in await sc.read_all(sid)], ["a", "b"])
        self.assertEqual(sc.returncode, 0, "shutdown then exit ends the process with code 0")
        self.assertEqual(await sc.stop(), 0, "stop twice is harmless")

    async def test_pipelining_many_requests_in_flight(self) -> None:
        async with self.make() as sc:
            sid = (await sc.create())["sessionId"]
            await sc.append(sid, [msg(str(i)) for i in range(1, 41)])
            # All 40 requests are written before any answer is awaited.
            futures = [sc.send_request("session/read", {"sessionId": sid, "afterSeq": n, "limit": 1})
                       for n in range(40)]
            pages = await asyncio.gather(*futures)
            self.assertEqual([p["records"][0]["message"]["content"] for p in pages], [str(i) for i in range(1, 41)])
            # The same through concurrent tasks, mixing methods, each answer to its own request.
            results = await asyncio.gather(
                *(sc.read(sid, after_seq=n, limit=2) for n in range(0, 40, 5)),
                sc.list(limit=5), sc.append(sid, [msg("x")]),
            )
            self.assertEqual([r["records"][0]["seq"] for r in results[:8]], list(range(1, 41, 5)))
            self.assertEqual([s["sessionId"] for s in results[8]["sessions"]], [sid])
            self.assertEqual(results[9], {"firstSeq": 41, "lastSeq": 41})

    async def test_typed_errors(self) -> None:
        async with self.make() as sc:
            with self.assertRaises(ss.InvalidSessionId):
                await sc.append("../bad", [msg("x")])
            sid = (await sc.create())["sessionId"]
            with self.assertRaises(ss.Conflict) as cm:
                await sc.append(sid, [msg("x")], expected_last_seq=5)
            self.assertEqual((cm.exception.kind, cm.exception.code), ("Conflict", -31003))
            with self.assertRaises(ss.SessionNotFound):
                await sc.open("01ZZZZZZZZZZZZZZZZZZZZZZZZ")
            with self.assertRaises(ss.InvalidParams) as ip:
                await sc.append(sid, [{**msg("x"), "seq": 3}])
            self.assertTrue(ip.exception.issues)
            with self.assertRaises(ss.MethodNotFound):
                await sc.request("session/nope", {})
            # The connection is still usable after errors.
            self.assertEqual(await sc.append(sid, [msg("ok")]), {"firstSeq": 1, "lastSeq": 1})

    async def test_notifications_as_an_async_iterator(self) -> None:
        store = temp_store(self)
        async with AsyncSidecar(store=store, command=command(), framing=FRAMING) as sc:
            sid = (await sc.create())["sessionId"]
            await sc.append(sid, [msg("before")])
            self.assertEqual(await sc.subscribe(sid), {"lastSeq": 1})
            await sc.append(sid, [msg("after1"), msg("after2")])
            seen: list[int] = []
            async def collect() -> None:
                async for n in sc.notifications():
                    self.assertIsInstance(n, ss.Notification)
                    if n.method == "session/didAppend":
                        self.assertEqual(n.params["sessionId"], sid)
                        seen.extend(r["seq"] for r in n.params["records"])
                        if seen[-1:] == [3]:
                            return
            await asyncio.wait_for(collect(), 20)
            self.assertEqual(seen, [1, 2, 3], "the backlog, then the new records, each once, in seq order")
            await sc.unsubscribe(sid)
        # The connection ended: the iterator ends instead of waiting forever.
        async def drain() -> list[ss.Notification]:
            return [n async for n in sc.notifications()]
        rest = await asyncio.wait_for(drain(), 10)
        self.assertTrue(all(n.method.startswith(("session/", "turn/")) for n in rest))

    async def test_death_fails_every_pending_request(self) -> None:
        sc = self.make()
        await sc.start()
        sid = (await sc.create())["sessionId"]
        await sc.append(sid, [msg("x")])
        # Requests in flight that the server will never answer: sent, then the process is killed.
        futures = [sc.send_request("session/read", {"sessionId": sid}) for _ in range(20)]
        futures.append(sc.send_request("shutdown"))
        assert sc.proc is not None
        sc.proc.kill()
        results = await asyncio.gather(*futures, return_exceptions=True)
        exited = [r for r in results if isinstance(r, ss.SidecarExited)]
        answered = [r for r in results if not isinstance(r, BaseException)]
        self.assertEqual(len(exited) + len(answered), len(futures), f"only answers or SidecarExited: {results!r}")
        self.assertGreater(len(exited), 0, "some requests were pending when the process died")
        self.assertIn("killed by signal 9", str(exited[0]))
        self.assertEqual(exited[0].returncode, -9)
        with self.assertRaises(ss.SidecarExited):
            await sc.list()
        async def drain() -> list[ss.Notification]:
            return [n async for n in sc.notifications()]
        self.assertEqual(await asyncio.wait_for(drain(), 10), [], "the iterator ends with the process")
        self.assertEqual(await sc.stop(), -9)

    async def test_unserializable_params_raise_and_leave_nothing_pending(self) -> None:
        async with self.make() as sc:
            sid = (await sc.create())["sessionId"]
            with self.assertRaises(ValueError):
                await sc.append(sid, [{"kind": "event", "type": "t", "payload": float("nan")}])
            with self.assertRaises(TypeError):
                await sc.append(sid, [{"kind": "event", "type": "t", "payload": object()}])
            self.assertEqual(sc._pending, {})
            self.assertEqual(await sc.append(sid, [msg("ok")]), {"firstSeq": 1, "lastSeq": 1}, "nothing was sent")

    async def test_timeout_cancels_and_raises(self) -> None:
        async with self.make(timeout=30) as sc:
            with self.assertRaises(TimeoutError):
                await sc.request("session/list", {}, timeout=0)
            self.assertIn("sessions", await sc.list())


if __name__ == "__main__":
    unittest.main()
