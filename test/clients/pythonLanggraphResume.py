"""The Python half of test/clients/pythonLanggraph.test.ts's cross-language resume.

    python pythonLanggraphResume.py STORE THREAD_ID [start]

(`start`: invoke with the input {items: ["input"], messages: [HumanMessage "hi", id "m-input"]};
else resume the thread with None.)

The same graph as the test's JavaScript one — START -> a -> b -> c -> d -> END, each node
appending its name to `items` (a list, concatenated) and an AIMessage (id `m-<name>`, content its
name) to `messages` (add_messages), interrupted before `c` and before `d` —
checkpointed by session_sidecar.langgraph.SidecarSaver on STORE. It prints one JSON line:
the state it found, the nodes it ran, the state it left and the thread's history length.
"""

from __future__ import annotations

import json
import operator
import sys
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from session_sidecar.langgraph import SidecarSaver


class State(TypedDict):
    items: Annotated[list[str], operator.add]
    messages: Annotated[list[AnyMessage], add_messages]


def plain(values: dict[str, Any]) -> dict[str, Any]:
    """The state as JSON: messages as [class name, id, content]."""
    return {"items": values.get("items"),
            "messages": [[type(m).__name__, m.id, m.content] for m in values.get("messages", [])]}


def main(store: str, thread_id: str, start: bool) -> None:
    ran: list[str] = []

    def node(name: str) -> Any:
        def run(state: State) -> dict[str, Any]:
            ran.append(name)
            return {"items": [name], "messages": [AIMessage(content=name, id=f"m-{name}")]}
        return run

    builder = StateGraph(State)
    for name in "abcd":
        builder.add_node(name, node(name))
    builder.add_edge(START, "a")
    for x, y in ("ab", "bc", "cd"):
        builder.add_edge(x, y)
    builder.add_edge("d", END)
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    with SidecarSaver.from_store(store) as saver:
        graph = builder.compile(checkpointer=saver, interrupt_before=["c", "d"])
        before = graph.get_state(config)
        inputs = {"items": ["input"], "messages": [HumanMessage(content="hi", id="m-input")]} if start else None
        out = graph.invoke(inputs, config)
        after = graph.get_state(config)
        history = list(saver.list(config))
        print(json.dumps({
            "found": plain(before.values), "foundNext": list(before.next), "ran": ran, "result": plain(out),
            "next": list(after.next), "history": len(history),
        }))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:] == ["start"])
