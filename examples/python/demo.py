#!/usr/bin/env python3
"""A narrated demo agent for session-sidecar: write a conversation, crash, recover, verify.

    python3 examples/python/demo.py [--store DIR] [--framing ndjson|lsp]

(or `npm run demo`, which builds first). Exits 0 when every acknowledged record survived
the SIGKILL unchanged, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from typing import Any

sys.dont_write_bytecode = True  # keep examples/python/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from session_sidecar import Sidecar, SidecarError  # noqa: E402


def say(text: str = "") -> None:
    print(text, flush=True)


def strip_stored(record: dict[str, Any]) -> dict[str, Any]:
    """A stored record without the members the store adds (seq, ts)."""
    return {k: v for k, v in record.items() if k not in ("seq", "ts")}


def transcript_line(record: dict[str, Any]) -> str:
    seq = record["seq"]
    if record["kind"] != "message":
        return f"   [{seq}] ({record['kind']}) {json.dumps(strip_stored(record))}"
    m = record["message"]
    role = m["role"]
    if role == "tool":
        return f"   [{seq}] tool {m.get('name', '')} (call {m.get('toolCallId')}) returned: {m.get('content')}"
    lines = [f"   [{seq}] {role}: {m['content']}"] if m.get("content") else []
    for call in m.get("toolCalls") or []:
        lines.append(f"   [{seq}] {role} calls tool {call['name']}({call['arguments']})  [call id {call['id']}]")
    return "\n".join(lines) or f"   [{seq}] {role}: (no content)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", help="store directory (default: a fresh temporary directory)")
    parser.add_argument("--framing", choices=("ndjson", "lsp"), default="ndjson",
                        help="how messages are framed on stdio (default: ndjson)")
    opts = parser.parse_args()
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="backslashreplace")  # the transcript has non-ASCII text
    store = opts.store or tempfile.mkdtemp(prefix="session-sidecar-demo-")

    say(f"1. Spawning the sidecar on store {store} (framing: {opts.framing}).")
    acked: dict[int, dict[str, Any]] = {}
    with Sidecar(store=store, framing=opts.framing, client_name="python-demo-agent") as sc:
        info = sc.server_info or {}
        say(f"   Connected to {info['serverInfo']['name']} {info['serverInfo']['version']}, "
            f"protocol version {info['protocolVersion']}, pid {sc.pid}; the store root is {info['store']['root']}.")

        say("2. Creating a session for a GPT-4o conversation.")
        say("   (Only the NAME of the environment variable holding the API key is stored, never the key.)")
        created = sc.create(
            title="Weather in Paris",
            cwd=os.getcwd(),
            systemPrompt="You are a helpful assistant with a weather tool.",
            llm={"provider": "openai", "model": "gpt-4o", "apiKeyEnv": "OPENAI_API_KEY"},
            metadata={"demo": True},
        )
        session_id = created["sessionId"]
        say(f"   Session {session_id} created at {created['createdAt']}.")

        say("3. Appending a short exchange, one turn at a time; each append is acknowledged only once durable.")
        exchange: list[tuple[str, dict[str, Any]]] = [
            ("the user's question", {"kind": "message", "message": {
                "role": "user", "content": "What's the weather in Paris right now?"}}),
            ("the assistant's tool call", {"kind": "message", "message": {
                "role": "assistant", "content": None,
                "toolCalls": [{"id": "call_1", "name": "get_weather",
                               "arguments": json.dumps({"city": "Paris", "unit": "celsius"})}]}}),
            ("the tool's result", {"kind": "message", "message": {
                "role": "tool", "toolCallId": "call_1", "name": "get_weather",
                "content": json.dumps({"city": "Paris", "tempC": 18, "sky": "light rain"})}}),
            ("the assistant's final answer", {"kind": "message", "message": {
                "role": "assistant", "content": "It's 18 °C in Paris with light rain — take an umbrella ☂."}}),
        ]
        last_seq = 0
        for what, record in exchange:
            ack = sc.append(session_id, [record], expected_last_seq=last_seq)
            if ack["firstSeq"] != last_seq + 1 or ack["lastSeq"] != ack["firstSeq"]:
                say(f"   FAIL: unexpected acknowledgement {ack} after seq {last_seq}")
                return 1
            acked[ack["lastSeq"]] = record
            last_seq = ack["lastSeq"]
            say(f"   Appended {what}: acknowledged as seq {last_seq}.")
        say(f"   Acknowledged seqs: {sorted(acked)}.")

        say(f"4. Killing the sidecar (pid {sc.pid}) with SIGKILL: no shutdown, no flush, no goodbye.")
        say("   The contract: nothing that was acknowledged may be lost.")
        rc = sc.kill()
        say(f"   The sidecar is gone (exit status {rc}).")

    say("5. Starting a new sidecar on the same store.")
    with Sidecar(store=store, framing=opts.framing, client_name="python-demo-agent") as sc:
        say(f"   New sidecar pid {sc.pid}.")
        say(f"6. Recovery: opening session {session_id} for writing.")
        opened = sc.open(session_id)
        say(f"   lastSeq = {opened['lastSeq']}; title = {opened.get('title')!r}; llm = {json.dumps(opened.get('llm'))}.")
        if opened.get("recovered"):
            say(f"   recovered = {json.dumps(opened['recovered'])} (a torn tail was repaired on open).")
        else:
            say("   recovered: nothing to repair — the journal ended cleanly.")

        say("7. Reading every record back (paging with nextAfterSeq). Transcript:")
        records = sc.read_all(session_id)
        for record in records:
            say(transcript_line(record))

        say("8. Verifying that every acknowledged record is present and identical.")
        by_seq = {r["seq"]: r for r in records}
        problems = []
        for seq, sent in sorted(acked.items()):
            got = by_seq.get(seq)
            if got is None:
                problems.append(f"seq {seq} is missing")
            elif strip_stored(got) != sent:
                problems.append(f"seq {seq} differs: sent {json.dumps(sent)}, read {json.dumps(strip_stored(got))}")
        if [r["seq"] for r in records] != list(range(1, len(records) + 1)):
            problems.append(f"seqs are not gapless: {[r['seq'] for r in records]}")
        if opened["lastSeq"] < max(acked):
            problems.append(f"lastSeq {opened['lastSeq']} is behind the last acknowledged seq {max(acked)}")
        if problems:
            for p in problems:
                say(f"   FAIL: {p}")
            return 1
        say(f"   OK: all {len(acked)} acknowledged records survived the SIGKILL, identical to what was sent.")

        say("9. Listing the sessions in the store.")
        listing = sc.list()
        for s in listing["sessions"]:
            say(f"   {s['sessionId']}  {s.get('title')!r}  lastSeq={s['lastSeq']}  bytes={s['bytes']}  updated {s['updatedAt']}")
            if s.get("firstMessage"):
                say(f"      first: {s['firstMessage']}")
            if s.get("lastMessage"):
                say(f"      last:  {s['lastMessage']}")
        if not any(s["sessionId"] == session_id for s in listing["sessions"]):
            say(f"   FAIL: session {session_id} is not listed")
            return 1

        say("10. Closing the session and shutting the sidecar down cleanly.")
        sc.close(session_id)
    say(f"   The sidecar exited with code {sc.returncode}.")
    if sc.returncode != 0:
        say("   FAIL: expected exit code 0 after shutdown + exit")
        return 1
    say(f"Done. The session lives on in {store}.")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SidecarError as e:
        print(f"demo failed: {e!r}", file=sys.stderr)
        sys.exit(1)
