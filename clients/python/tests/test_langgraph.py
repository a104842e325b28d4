"""session_sidecar.langgraph.SidecarSaver against the real sidecar and the real LangGraph (pytest).

Skipped (as a module) when langgraph, langgraph-checkpoint-conformance or pytest is not
importable — e.g. under the stdlib ``unittest discover`` of test/clients/python.test.ts.
test/clients/pythonLanggraph.test.ts runs it in a venv with pinned PyPI packages.

- the official LangGraph conformance suite (langgraph-checkpoint-conformance ``validate``)
  over an ``AsyncSidecar`` (async methods native) and over a ``Sidecar`` (sync methods native);
- a StateGraph interrupted, its sidecar SIGKILLed, resumed by a new saver (sync and async);
- the records are the JavaScript saver's: event types, payload members, tags, serialization;
- values plain JSON cannot carry round-trip (serde fallback), LangChain messages as "json";
- a registered secret in the state refuses the checkpoint; nothing is stored;
- a compacted thread session (records in archived generations) still serves every checkpoint;
- parallel branches (concurrent put_writes), sync and async.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import operator
import os
import shutil
import sys
import tempfile
import unittest
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Annotated, Any, TypedDict

try:
    import pytest
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import BaseCheckpointSaver, empty_checkpoint
    from langgraph.checkpoint.conformance import checkpointer_test, validate
    from langgraph.checkpoint.conformance.report import ProgressCallbacks
    from langgraph.graph import END, START, StateGraph
except ImportError as e:  # pragma: no cover - depends on the environment
    raise unittest.SkipTest(f"langgraph / langgraph-checkpoint-conformance / pytest not importable: {e}")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from helpers import command  # noqa: E402

from session_sidecar import AsyncSidecar, SecretRejected, Sidecar  # noqa: E402
from session_sidecar.langgraph import (  # noqa: E402
    ALL_TAG, CHECKPOINT_EVENT, WRITES_EVENT, SidecarSaver, namespace_tag, thread_tag,
)


@pytest.fixture
def store() -> Iterator[str]:
    d = tempfile.mkdtemp(prefix="sidecar-py-langgraph-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _report(name: str, report: Any) -> dict[str, int]:
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for r in report.results.values():
        counts["passed"] += r.tests_passed
        counts["failed"] += r.tests_failed
        counts["skipped"] += r.tests_skipped
    # One line the vitest wrapper reads back (pytest -s).
    print(f"CONFORMANCE {name} {json.dumps(counts)}")
    return counts


# -- the official conformance suite ---------------------------------------------------------

def test_conformance_over_async_sidecar() -> None:
    @checkpointer_test(name="SidecarSaver(AsyncSidecar)")
    async def factory() -> AsyncIterator[BaseCheckpointSaver[Any]]:
        d = tempfile.mkdtemp(prefix="sidecar-py-conformance-")
        try:
            async with SidecarSaver.afrom_store(d, command=command()) as saver:
                yield saver
        finally:
            shutil.rmtree(d, ignore_errors=True)

    report = asyncio.run(validate(factory, progress=ProgressCallbacks.verbose()))
    report.print_report()
    counts = _report("async", report)
    assert report.passed_all_base(), report.results
    assert counts["failed"] == 0 and counts["passed"] >= 50


def test_conformance_over_sync_sidecar() -> None:
    @checkpointer_test(name="SidecarSaver(Sidecar)")
    async def factory() -> AsyncIterator[BaseCheckpointSaver[Any]]:
        d = tempfile.mkdtemp(prefix="sidecar-py-conformance-")
        sc = Sidecar(store=d, command=command())
        sc.start()
        saver = SidecarSaver(sc)
        try:
            yield saver
        finally:
            saver.close()
            sc.stop()
            shutil.rmtree(d, ignore_errors=True)

    report = asyncio.run(validate(factory, progress=ProgressCallbacks.verbose()))
    report.print_report()
    counts = _report("sync", report)
    assert report.passed_all_base(), report.results
    assert counts["failed"] == 0 and counts["passed"] >= 50


# -- a real graph -----------------------------------------------------------------------------

class State(TypedDict):
    items: Annotated[list[str], operator.add]


def _graph(saver: SidecarSaver, ran: list[str]) -> Any:
    def node(name: str) -> Callable[[State], dict[str, list[str]]]:
        def run(state: State) -> dict[str, list[str]]:
            ran.append(name)
            return {"items": [name]}
        return run

    b = StateGraph(State)
    b.add_node("first", node("first"))
    b.add_node("second", node("second"))
    b.add_edge(START, "first")
    b.add_edge("first", "second")
    b.add_edge("second", END)
    return b.compile(checkpointer=saver, interrupt_before=["second"])


def test_sync_graph_resumes_after_sigkill(store: str) -> None:
    config: RunnableConfig = {"configurable": {"thread_id": "resume-thread"}}
    ran: list[str] = []
    sc = Sidecar(store=store, command=command())
    sc.start()
    first = SidecarSaver(sc)
    assert _graph(first, ran).invoke({"items": ["input"]}, config) == {"items": ["input", "first"]}
    assert ran == ["first"]
    assert sc.kill() is not None  # SIGKILL: no index copy saved, no close

    with SidecarSaver.from_store(store, command=command()) as second:
        g = _graph(second, ran)
        before = g.get_state(config)
        assert before.values == {"items": ["input", "first"]}
        assert before.next == ("second",)
        assert g.invoke(None, config) == {"items": ["input", "first", "second"]}
        assert ran == ["first", "second"]  # the first node did not run again
        assert g.get_state(config).next == ()
        history = list(second.list(config))
        assert len(history) >= 4
        assert history[0].checkpoint["channel_values"]["items"] == ["input", "first", "second"]
        for newer, older in zip(history, history[1:]):
            assert newer.parent_config is not None
            assert newer.parent_config["configurable"]["checkpoint_id"] == older.checkpoint["id"]


def test_async_graph_resumes_after_sigkill(store: str) -> None:
    async def main() -> None:
        config: RunnableConfig = {"configurable": {"thread_id": "aresume"}}
        ran: list[str] = []
        sc = AsyncSidecar(store=store, command=command())
        await sc.start()
        first = SidecarSaver(sc)
        assert await _graph(first, ran).ainvoke({"items": ["input"]}, config) == {"items": ["input", "first"]}
        await sc.kill()
        async with SidecarSaver.afrom_store(store, command=command()) as second:
            g = _graph(second, ran)
            assert (await g.aget_state(config)).next == ("second",)
            assert await g.ainvoke(None, config) == {"items": ["input", "first", "second"]}
            assert ran == ["first", "second"]
            # Sync calls from another thread run on the AsyncSidecar's loop.
            t = await asyncio.to_thread(second.get_tuple, config)
            assert t is not None and t.checkpoint["channel_values"]["items"] == ["input", "first", "second"]
            # ... and from the loop's own thread they refuse rather than block it.
            with pytest.raises(asyncio.InvalidStateError):
                second.get_tuple(config)

    asyncio.run(main())


# -- the record format (the JavaScript saver's) -----------------------------------------------

def test_records_are_the_js_savers(store: str) -> None:
    config: RunnableConfig = {"configurable": {"thread_id": "fmt", "checkpoint_ns": ""}}
    ran: list[str] = []
    with SidecarSaver.from_store(store, command=command()) as saver:
        _graph(saver, ran).invoke({"items": ["input"]}, config)
        sc = saver.sidecar
        assert isinstance(sc, Sidecar)
        listed = sc.request("session/list", {"tags": [namespace_tag("fmt", "")]})["sessions"]
        assert len(listed) == 1
        sid = listed[0]["sessionId"]
        assert set(listed[0]["tags"]) >= {ALL_TAG, thread_tag("fmt"), namespace_tag("fmt", "")}
        records = [r for r in sc.read_all(sid) if r["kind"] == "event"]
    # The tags are JavaScript's: sha256 of JSON.stringify(...), first 40 hex digits.
    assert thread_tag("fmt") == "langgraph.thread:" + __import__("hashlib").sha256(b'"fmt"').hexdigest()[:40]
    assert namespace_tag("x\u2028\"y", "") .startswith("langgraph.ns:")
    types = {r["type"] for r in records}
    assert types == {CHECKPOINT_EVENT, WRITES_EVENT}
    for r in records:
        p = r["payload"]
        if r["type"] == CHECKPOINT_EVENT:
            assert list(p) == ["threadId", "ns", "id", "parentId", "checkpoint", "metadata", "values"]
            assert p["checkpoint"]["type"] == "json" and "channel_values" not in json.loads(p["checkpoint"]["text"])
            assert p["metadata"]["type"] == "json"
            for ch, ver, value in p["values"]:
                assert isinstance(ch, str) and isinstance(ver, int)
                assert value is None or value["type"] == "json"
        else:
            assert list(p) == ["threadId", "ns", "checkpointId", "taskId", "taskPath", "writes"]
            for idx, ch, value in p["writes"]:
                assert isinstance(idx, int) and isinstance(ch, str) and value["type"] == "json"


def test_values_json_cannot_carry_round_trip(store: str) -> None:
    when = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    values: dict[str, Any] = {
        "tuple": (1, "a"), "set": {1, 2}, "when": when, "bytes": b"\xff\x00raw", "nan": float("nan"),
        "messages": [HumanMessage(content="hi", id="1"), AIMessage(content="hello", id="2")],
        "plain": {"n": 2 ** 60, "f": 1.5, "s": "\u00e9\u2028", "none": None, "list": [True, False]},
    }
    config: RunnableConfig = {"configurable": {"thread_id": "types", "checkpoint_ns": ""}}
    cp = empty_checkpoint()
    cp["channel_values"] = values
    versions = {k: 1 for k in values}
    cp["channel_versions"] = dict(versions)
    with SidecarSaver.from_store(store, command=command()) as saver:
        saver.put(config, cp, {"source": "input", "step": -1, "parents": {}}, versions)
        sc = saver.sidecar
        assert isinstance(sc, Sidecar)
        sid = sc.request("session/list", {"tags": [thread_tag("types")]})["sessions"][0]["sessionId"]
        last = sc.read_all(sid)[-1]["payload"]["values"]
        stored = {ch: v["type"] for ch, _, v in last}
        messages_text = next(v["text"] for ch, _, v in last if ch == "messages")
    assert stored["plain"] == "json" and stored["messages"] == "json" and stored["bytes"] == "bytes"
    # Messages under the id JavaScript's load() knows (Python's own to_json says langchain.schema.messages).
    assert [m["id"] for m in json.loads(messages_text)] == [
        ["langchain_core", "messages", "HumanMessage"], ["langchain_core", "messages", "AIMessage"]]
    assert stored["tuple"] == stored["set"] == stored["when"] == "msgpack"
    with SidecarSaver.from_store(store, command=command()) as again:  # read back by a new process
        t = again.get_tuple(config)
    assert t is not None
    got = t.checkpoint["channel_values"]
    assert got["plain"] == values["plain"]
    assert got["bytes"] == values["bytes"]
    assert got["set"] == {1, 2} and got["when"] == when
    assert [type(m).__name__ for m in got["messages"]] == ["HumanMessage", "AIMessage"]
    assert [m.content for m in got["messages"]] == ["hi", "hello"]


def test_a_registered_secret_refuses_the_checkpoint(store: str) -> None:
    secret = "sk-py-langgraph-" + "7" * 24
    config: RunnableConfig = {"configurable": {"thread_id": "secret"}}
    ran: list[str] = []
    with SidecarSaver.from_store(store, command=command(), secrets={"values": [secret]}) as saver:
        g = _graph(saver, ran)
        g.invoke({"items": ["ok"]}, config)
        kept = saver.get_tuple(config)
        assert kept is not None
        with pytest.raises(SecretRejected):
            g.invoke({"items": [f"the key is {secret}"]}, {"configurable": {"thread_id": "secret"}})
        latest = saver.get_tuple(config)
        assert latest is not None and secret not in json.dumps(latest.checkpoint["channel_values"])


# -- a compacted thread session (records moved to archived generations) -----------------------

def _chain(saver: SidecarSaver, config: RunnableConfig, n: int) -> None:
    """n checkpoints, each with one pending write; channel `fixed` is stored by the first only."""
    parent: str | None = None
    for i in range(n):
        cp = empty_checkpoint()
        cp["id"] = f"cp-{i:02d}"
        cp["channel_values"] = {"n": i, "fixed": "from the first"}
        cp["channel_versions"] = {"n": i + 1, "fixed": 1}
        new_versions: dict[str, Any] = {"n": i + 1, **({"fixed": 1} if i == 0 else {})}
        c: RunnableConfig = {"configurable": {**config["configurable"], **({"checkpoint_id": parent} if parent else {})}}
        saved = saver.put(c, cp, {"source": "loop", "step": i, "parents": {}}, new_versions)
        saver.put_writes(saved, [("n", i * 10)], f"task-{i}")
        parent = cp["id"]


def _everything(saver: SidecarSaver, config: RunnableConfig) -> list[Any]:
    return [(t.checkpoint["id"], t.checkpoint["channel_values"], t.pending_writes, t.parent_config)
            for t in saver.list(config)]


@pytest.mark.parametrize("saved", [True, False], ids=["with its saved index copy", "after a SIGKILL"])
def test_a_compacted_thread_session_still_serves_every_checkpoint(store: str, saved: bool) -> None:
    config: RunnableConfig = {"configurable": {"thread_id": "long", "checkpoint_ns": ""}}
    sc = Sidecar(store=store, command=command())
    sc.start()
    first = SidecarSaver(sc)
    _chain(first, config, 6)  # 12 records
    expected = _everything(first, config)
    assert len(expected) == 6 and expected[0][1] == {"n": 5, "fixed": "from the first"}
    sid = sc.request("session/list", {"tags": [thread_tag("long")]})["sessions"][0]["sessionId"]
    sc.request("session/compact", {"sessionId": sid, "throughSeq": 5, "summary": "first half"})
    sc.request("session/compact", {"sessionId": sid, "throughSeq": 9, "summary": "more"})
    assert _everything(first, config) == expected
    if saved:
        first.close()
        sc.stop()
    else:
        sc.kill()
    with SidecarSaver.from_store(store, command=command()) as saver:
        assert _everything(saver, config) == expected
        c: RunnableConfig = {"configurable": {**config["configurable"], "checkpoint_id": "cp-05"}}
        cp = empty_checkpoint()
        cp["id"] = "cp-06"
        cp["channel_values"] = {"n": 6, "fixed": "from the first"}
        cp["channel_versions"] = {"n": 7, "fixed": 1}
        saver.put(c, cp, {"source": "loop", "step": 6, "parents": {}}, {"n": 7})
        latest = saver.get_tuple(config)
        assert latest is not None and latest.checkpoint["channel_values"] == {"n": 6, "fixed": "from the first"}


# -- parallel tasks: concurrent put_writes on one saver ---------------------------------------

def _fan_out(saver: SidecarSaver) -> Any:
    b = StateGraph(State)
    for name in ("x", "y", "z"):
        b.add_node(name, (lambda n: lambda s: {"items": [n]})(name))
        b.add_edge(START, name)
    b.add_node("join", lambda s: {"items": [f"join:{len(s['items'])}"]})
    b.add_edge(["x", "y", "z"], "join")
    b.add_edge("join", END)
    return b.compile(checkpointer=saver)


def test_parallel_branches_sync_and_async(store: str) -> None:
    with SidecarSaver.from_store(store, command=command()) as saver:
        out = _fan_out(saver).invoke({"items": []}, {"configurable": {"thread_id": "fan-sync"}})
    assert sorted(out["items"][:3]) == ["x", "y", "z"] and out["items"][3] == "join:3"

    async def main() -> list[str]:
        async with SidecarSaver.afrom_store(store, command=command()) as asaver:
            g = _fan_out(asaver)
            res = await g.ainvoke({"items": []}, {"configurable": {"thread_id": "fan-async"}})
            # The sync thread's checkpoints, read back by another process.
            again = await g.aget_state({"configurable": {"thread_id": "fan-sync"}})
            assert again.values == out
            return list(res["items"])

    items = asyncio.run(main())
    assert sorted(items[:3]) == ["x", "y", "z"] and items[3] == "join:3"
