"""Type-checked, never run: SidecarSession is an Agents SDK ``Session`` to mypy --strict
(test/clients/pythonAgents.test.ts runs ``mypy --strict`` on this file in the venv with the SDK)."""

from agents import Agent, Runner
from agents.memory import Session, SessionSettings

from session_sidecar import SidecarSession


def as_session(s: SidecarSession) -> Session:
    return s


async def run(agent: Agent[None]) -> str:
    session: Session = SidecarSession("conversation_123", store="/tmp/store", session_settings=SessionSettings(limit=10))
    opened: Session = await SidecarSession.open(session_id="conversation_123", store="/tmp/store")
    result = await Runner.run(agent, "hi", session=session)
    await opened.add_items([{"role": "user", "content": "x"}])
    return str(result.final_output)
