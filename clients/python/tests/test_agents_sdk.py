"""SidecarSession with the REAL OpenAI Agents SDK (``pip install openai-agents``): ``Runner.run``
with a model of our own (a subclass of the SDK's ``Model``; no network), the session resumed
across a SIGKILL of the sidecar, and the SDK's ``Session`` protocol checked with isinstance.

Skipped (with the reason) when the ``agents`` package is not importable, unless
SIDECAR_REQUIRE_AGENTS=1 (test/clients/pythonAgents.test.ts sets it), which makes that a failure.
The SDK ships no reusable session tests (agents.testing has a scripted model and sandbox, no
session suite), so the protocol's behaviour is checked here against the SDK's SQLiteSession.
"""

from __future__ import annotations

import json
import os
import unittest
from typing import Any

from helpers import FRAMING, command, has_rewind, temp_store

from session_sidecar import AsyncSidecar, SidecarSession

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")  # no trace export (no network)
try:
    import agents
    from agents import Agent, Model, ModelResponse, Runner, SQLiteSession, Usage
    from agents.memory import Session, SessionABC
    from openai.types.responses import ResponseOutputMessage, ResponseOutputText
    HAVE_AGENTS = True
except ImportError as e:  # the stdlib-only run of this package's tests
    if os.environ.get("SIDECAR_REQUIRE_AGENTS") == "1":
        raise
    HAVE_AGENTS = False
    WHY = f"the openai-agents package is not installed ({e})"

if HAVE_AGENTS:
    class EchoModel(Model):
        """Answers "reply N: <last user text> (saw K items)"; keeps every input it was given."""

        def __init__(self) -> None:
            self.inputs: list[list[Any]] = []

        async def get_response(self, system_instructions: Any, input: Any, model_settings: Any, tools: Any,
                               output_schema: Any, handoffs: Any, tracing: Any, *, previous_response_id: Any = None,
                               conversation_id: Any = None, prompt: Any = None) -> Any:
            items = [{"role": "user", "content": input}] if isinstance(input, str) else [dict(i) if isinstance(i, dict) else i for i in input]
            self.inputs.append(items)
            users = [i for i in items if isinstance(i, dict) and i.get("role") == "user"]
            text = f"reply {len(self.inputs)}: {users[-1]['content'] if users else ''} (saw {len(items)} items)"
            msg = ResponseOutputMessage(id=f"msg_{len(self.inputs)}", type="message", role="assistant", status="completed",
                                        content=[ResponseOutputText(type="output_text", text=text, annotations=[])])
            return ModelResponse(output=[msg], usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("not streamed in these tests")


def dumps(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False, sort_keys=False, separators=(",", ":"))


def texts(items: list[Any]) -> list[str]:
    out = []
    for i in items:
        c = i.get("content")
        out.append(c if isinstance(c, str) else "".join(p.get("text", "") for p in c))
    return out


@unittest.skipUnless(HAVE_AGENTS, "" if HAVE_AGENTS else WHY)
class AgentsSdkTest(unittest.IsolatedAsyncioTestCase):
    async def test_it_is_an_agents_sdk_session(self) -> None:
        s = SidecarSession("conversation_123", store=temp_store(self))
        self.assertIsInstance(s, Session, "the SDK's runtime-checkable Session protocol")
        self.assertNotIsInstance(s, SessionABC, "the protocol, not the SDK-internal ABC")
        self.assertEqual(s.session_id, "conversation_123")
        self.assertIsNone(s.session_settings)
        await s.close()
        print(f"openai-agents {agents.__version__}")

    async def test_runner_resumes_across_a_sigkill_of_the_sidecar(self) -> None:
        store = temp_store(self)
        model = EchoModel()
        agent = Agent(name="assistant", instructions="Be terse.", model=model)
        s1 = SidecarSession("conversation_123", store=store)
        r1 = await Runner.run(agent, "What's the weather in Zürich? ☀️", session=s1)
        self.assertEqual(r1.final_output, "reply 1: What's the weather in Zürich? ☀️ (saw 1 items)")
        turn1 = await s1.get_items()
        self.assertEqual(texts(turn1), ["What's the weather in Zürich? ☀️", r1.final_output])
        sid = s1.sidecar_session_id
        sc = s1.sidecar
        assert sc is not None
        self.assertEqual(await sc.kill(), -9, "SIGKILL between turns: no shutdown, no session/close")
        await s1.close()

        s2 = SidecarSession("conversation_123", store=store)  # a new sidecar on the same store
        r2 = await Runner.run(agent, "And tomorrow?", session=s2)
        self.assertEqual(s2.sidecar_session_id, sid, "the caller's id found the same sidecar session")
        self.assertEqual([dumps(i) for i in model.inputs[1][:2]], [dumps(i) for i in turn1],
                         "the model saw the earlier items exactly as stored")
        self.assertEqual(texts(model.inputs[1])[2], "And tomorrow?")
        self.assertEqual(r2.final_output, "reply 2: And tomorrow? (saw 3 items)")
        self.assertEqual(texts(await s2.get_items()), [*texts(turn1), "And tomorrow?", r2.final_output])
        await s2.close()

        # The sidecar journal: one agents.item event per item, nothing else.
        async with AsyncSidecar(store=store, command=command(), framing=FRAMING) as sc3:
            records = await sc3.read_all(sid)
            self.assertEqual([(r["kind"], r["type"]) for r in records], [("event", "agents.item")] * 4)

    async def test_session_settings_limit_bounds_what_the_model_sees(self) -> None:
        from agents.memory import SessionSettings
        model = EchoModel()
        agent = Agent(name="a", model=model)
        s = SidecarSession("limited", store=temp_store(self), session_settings=SessionSettings(limit=2))
        for q in ("one", "two", "three"):
            await Runner.run(agent, q, session=s)
        self.assertEqual(texts(model.inputs[2]), ["two", "reply 2: two (saw 3 items)", "three"])
        await s.close()

    async def test_same_behaviour_as_the_sdks_sqlite_session(self) -> None:
        items: list[Any] = [
            {"role": "user", "content": "hi"},
            {"type": "message", "role": "assistant", "id": "m1", "status": "completed",
             "content": [{"type": "output_text", "text": "hello", "annotations": []}]},
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}", "id": "fc1", "status": "completed"},
            {"type": "function_call_output", "call_id": "c1", "output": "42"},
        ]
        ours = SidecarSession("same", store=temp_store(self))
        theirs = SQLiteSession("same")
        for s in (ours, theirs):
            await s.add_items(items[:3])
            await s.add_items(items[3:])
        for limit in (None, 0, 1, 3, 10):
            self.assertEqual(await ours.get_items(limit), await theirs.get_items(limit), f"limit={limit}")
        if has_rewind():
            self.assertEqual(await ours.pop_item(), await theirs.pop_item())
            self.assertEqual(await ours.get_items(), await theirs.get_items())
            await ours.clear_session()
            await theirs.clear_session()
            self.assertEqual(await ours.get_items(), await theirs.get_items())
            self.assertIsNone(await ours.pop_item())
        await ours.close()
        theirs.close()


if __name__ == "__main__":
    unittest.main()
