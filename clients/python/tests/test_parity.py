"""AsyncSidecar is at parity with Sidecar: every public method (and property) of Sidecar exists
on AsyncSidecar with the same parameters — names, kinds and defaults — and the same
constructor; the request helpers take ``idempotency_key`` where the protocol has one."""

from __future__ import annotations

import inspect
import unittest

import helpers  # noqa: F401  (puts src/ on sys.path)

from session_sidecar import AsyncSidecar, Sidecar


def public(cls: type) -> dict[str, object]:
    return {n: v for n, v in vars(cls).items() if not n.startswith("_") or n == "__init__"}


def shape(fn: object) -> list[tuple[str, object, object]]:
    sig = inspect.signature(fn)  # type: ignore[arg-type]
    return [(p.name, p.kind, p.default) for p in sig.parameters.values()]


class ParityTest(unittest.TestCase):
    def test_every_public_method_of_sidecar_is_on_async_sidecar_with_the_same_parameters(self) -> None:
        sync, aio = public(Sidecar), public(AsyncSidecar)
        missing = sorted(set(sync) - set(aio))
        self.assertEqual(missing, [], "Sidecar members AsyncSidecar lacks")
        for name, member in sync.items():
            with self.subTest(name=name):
                other = aio[name]
                if isinstance(member, property):
                    self.assertIsInstance(other, property)
                    continue
                self.assertTrue(callable(member), name)
                self.assertEqual(shape(other), shape(member), name)
                if name not in ("__init__", "request_async", "cancel"):
                    # what Sidecar answers, AsyncSidecar answers as a coroutine (or async iterator)
                    self.assertTrue(inspect.iscoroutinefunction(other) or inspect.isasyncgenfunction(other), name)
        self.assertGreaterEqual(len(sync), 30)

    def test_idempotency_key_on_create_append_update(self) -> None:
        for cls in (Sidecar, AsyncSidecar):
            for name in ("create", "append", "update"):
                with self.subTest(cls=cls.__name__, name=name):
                    p = inspect.signature(getattr(cls, name)).parameters["idempotency_key"]
                    self.assertEqual((p.kind, p.default), (inspect.Parameter.KEYWORD_ONLY, None))


class IdempotencyKeyTest(unittest.IsolatedAsyncioTestCase):
    async def test_a_keyed_create_append_and_update_answer_the_original_when_resent(self) -> None:
        store = helpers.temp_store(self)
        async with AsyncSidecar(store=store, command=helpers.command(), framing=helpers.FRAMING) as sc:
            a = await sc.create(title="t", idempotency_key="create-1")
            self.assertEqual(await sc.create(title="t", idempotency_key="create-1"), a)
            sid = a["sessionId"]
            rec = [{"kind": "event", "type": "x", "payload": {"n": 1}}]
            first = await sc.append(sid, rec, idempotency_key="append-1")
            self.assertEqual(await sc.append(sid, rec, idempotency_key="append-1"), first)
            u = await sc.update(sid, title="renamed", tags=["a"], idempotency_key="update-1")
            self.assertEqual((await sc.update(sid, title="renamed", tags=["a"], idempotency_key="update-1"))["seq"], u["seq"])
            self.assertEqual(len(await sc.read_all(sid)), 2, "one append, one update record")
        with Sidecar(store=store, command=helpers.command(), framing=helpers.FRAMING) as s:
            self.assertEqual(s.create(title="t", idempotency_key="create-1")["sessionId"], sid, "a new process finds it")
            self.assertEqual(s.append(sid, rec, idempotency_key="append-1"), first)
            self.assertEqual(s.update(sid, metadata={"k": 1})["metadata"], {"k": 1})
            self.assertEqual(s.list()["sessions"][0]["title"], "renamed")


if __name__ == "__main__":
    unittest.main()
