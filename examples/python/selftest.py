#!/usr/bin/env python3
"""Self-test of session_sidecar.py against the built sidecar (run by test/examples/python.test.ts).

    python3 examples/python/selftest.py [--store DIR] [--framing ndjson|lsp]

Prints one line per check and "selftest ok" at the end; exits 1 at the first failure.
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
import tempfile
from typing import Any, Callable

sys.dont_write_bytecode = True  # keep examples/python/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import session_sidecar as ss  # noqa: E402
from session_sidecar import Sidecar  # noqa: E402


class CheckFailed(Exception):
    pass


def check(cond: bool, what: str) -> None:
    if not cond:
        raise CheckFailed(what)
    print(f"ok - {what}", flush=True)


def raises(exc: type[BaseException], fn: Callable[[], Any], what: str) -> BaseException:
    try:
        fn()
    except exc as e:
        print(f"ok - {what}: {type(e).__name__}: {e}", flush=True)
        return e
    except BaseException as e:  # noqa: BLE001
        raise CheckFailed(f"{what}: expected {exc.__name__}, got {type(e).__name__}: {e!r}") from e
    raise CheckFailed(f"{what}: expected {exc.__name__}, nothing was raised")


def msg(role: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {"kind": "message", "message": {"role": role, "content": content, **extra}}


def run(store: str, framing: str) -> None:
    # The error mapping alone, without a process.
    e = ss.error_from_response({"code": -31003, "message": "m", "data": {"kind": "Conflict", "lastSeq": 3}})
    check(type(e) is ss.Conflict and e.kind == "Conflict" and e.code == -31003 and e.data["lastSeq"] == 3,
          "error_from_response maps data.kind to its class")
    e = ss.error_from_response({"code": -31099, "message": "m", "data": {"kind": "SomethingNew"}})
    check(type(e) is ss.SidecarError and e.kind == "SomethingNew", "an unknown kind falls back to SidecarError")
    e = ss.error_from_response({"code": -32602, "message": "m"})
    check(type(e) is ss.InvalidParams, "a known code without data maps by code")

    notes: list[tuple[str, Any]] = []
    with Sidecar(store=store, framing=framing, client_name="selftest",
                 on_notification=lambda m, p: notes.append((m, p))) as sc:
        info = sc.server_info or {}
        check(info.get("protocolVersion") == 1 and os.path.realpath(info["store"]["root"]) == os.path.realpath(store),
              "initialize answered protocol version 1 and the store root")

        sid = sc.create(title="selftest", llm={"provider": "openai", "model": "gpt-4o", "apiKeyEnv": "OPENAI_API_KEY"},
                        metadata={"n": 1})["sessionId"]
        check(isinstance(sid, str) and sid != "", f"create returned session id {sid}")

        sent = [
            msg("user", "hello"),
            msg("assistant", None, toolCalls=[{"id": "c1", "name": "echo", "arguments": '{"x":1}'}]),
            msg("tool", "1", toolCallId="c1"),
            {"kind": "event", "type": "note", "payload": {"k": [1, 2, 3]}},
            {"kind": "interruption", "reason": "user", "phase": "providerStream", "assistantText": "par"},
        ]
        ack = sc.append(sid, sent[:3])
        check(ack == {"firstSeq": 1, "lastSeq": 3}, f"append of 3 records acknowledged 1..3: {ack}")
        ack = sc.append(sid, sent[3:], expected_last_seq=3)
        check(ack == {"firstSeq": 4, "lastSeq": 5}, f"append with expected_last_seq=3 acknowledged 4..5: {ack}")

        page = sc.read(sid, limit=2)
        check([r["seq"] for r in page["records"]] == [1, 2] and page["nextAfterSeq"] == 2 and page["lastSeq"] == 5,
              "read with limit=2 returned one page and nextAfterSeq")
        records = sc.read_all(sid, page_size=2)
        check([{k: v for k, v in r.items() if k not in ("seq", "ts")} for r in records] == sent,
              "read_all (paging) returned every record unchanged")
        events = sc.read(sid, kinds=["event"])["records"]
        check([r["seq"] for r in events] == [4], "read with kinds=['event'] filtered")
        page = sc.read(sid, after_seq=5)
        check(page["records"] == [] and page["nextAfterSeq"] is None, "read after the last seq is empty")

        # Several requests in flight at once, matched by id.
        futures = [sc.request_async("session/read", {"sessionId": sid, "afterSeq": n, "limit": 1}) for n in range(5)]
        seqs = [f.result(30)["records"][0]["seq"] for f in futures]
        check(seqs == [1, 2, 3, 4, 5], "5 concurrent requests each got their own answer")

        listing = sc.list(limit=10)
        mine = [s for s in listing["sessions"] if s["sessionId"] == sid]
        check(len(mine) == 1 and mine[0]["lastSeq"] == 5 and mine[0].get("title") == "selftest", "list shows the session")

        # Context and compaction.
        ctx = sc.context(sid)
        check(ctx["messages"][0]["role"] != "tool" and ctx["turn"] is None, "context rebuilds the conversation")
        compacted = sc.compact(sid, "the first records, summarized", 3)
        check(compacted["generation"] == 1 and compacted["checkpointSeq"] == 3, "compact archives generation 0 and checkpoints seq 3")
        ctx = sc.context(sid)
        check(ctx["messages"][0]["content"] == "the first records, summarized", "context starts with the checkpoint summary")
        check(sc.history(sid)["generations"][0]["records"] == 5, "history lists the archived generation")
        check(len(sc.read(sid, limit=100)["records"]) == 3, "the active journal holds the checkpoint and the suffix")

        # Typed errors.
        raises(ss.InvalidSessionId, lambda: sc.append("../bad", [msg("user", "x")]),
               "appending to session id '../bad' raises InvalidSessionId")
        err = raises(ss.Conflict, lambda: sc.append(sid, [msg("user", "x")], expected_last_seq=2),
                     "an expected_last_seq mismatch raises Conflict")
        check(isinstance(err, ss.SidecarError) and err.kind == "Conflict" and err.code == -31003, "Conflict carries kind and code")
        err = raises(ss.InvalidParams, lambda: sc.append(sid, [{**msg("user", "x"), "seq": 9}]),
                     "an unknown top-level record member raises InvalidParams")
        check(bool(err.issues), f"InvalidParams lists issues: {err.issues}")
        raises(ss.SessionNotFound, lambda: sc.open("01ZZZZZZZZZZZZZZZZZZZZZZZZ"), "opening a missing session raises SessionNotFound")
        raises(ss.MethodNotFound, lambda: sc.request("session/nope", {}), "an unknown method raises MethodNotFound")

        sc.close(sid)
        raises(ss.ReadOnly, lambda: sc.append(sid, [msg("user", "x")]), "appending after close raises ReadOnly")
    check(sc.returncode == 0, "shutdown + exit ended the sidecar with code 0")

    # A new process: open, append, read back.
    with Sidecar(store=store, framing=framing, stderr="capture") as sc:
        opened = sc.open(sid, mode="read")
        check(opened["mode"] == "read" and opened["lastSeq"] == 5 and opened.get("llm", {}).get("model") == "gpt-4o",
              "open in a new process (read mode) shows lastSeq and the llm config")
        raises(ss.ReadOnly, lambda: sc.append(sid, [msg("user", "x")]), "appending to a read-only open raises ReadOnly")
        opened = sc.open(sid)
        check(opened["mode"] == "write", "re-open in write mode")
        check(sc.append(sid, [msg("user", "again")], expected_last_seq=5) == {"firstSeq": 6, "lastSeq": 6},
              "append after open continues at seq 6")
        check([r["seq"] for r in sc.read_all(sid)] == [3, 4, 5, 6], "read_all sees the checkpoint (seq 3) and records 4..6")
        pid = sc.pid
        rc = sc.kill()
        check(rc == -9 or os.name != "posix", f"kill() ended pid {pid} with SIGKILL (returncode {rc})")
        raises(ss.SidecarExited, lambda: sc.list(), "a request after kill raises SidecarExited")

    # Agent runtime, in a session of its own, resumed by path.
    with Sidecar(store=store, framing=framing, stderr="capture") as sc:
        rid = sc.create(title="runtime")["sessionId"]
        sc.close(rid)
        check(sc.open(path=os.path.join(store, "sessions", rid))["sessionId"] == rid, "open by path resumes the session")
        scratch = sc.allocate_scratch(rid, "req-1")
        check(os.path.isdir(scratch["tmpDir"]), "allocate_scratch created a private directory with tmp/")
        big = "x" * 300_000
        sc.append(rid, [
            {"kind": "api", "direction": "request", "payload": {"model": "m"}},
            {"kind": "toolStart", "toolSeq": scratch["toolSeq"], "requestId": "req-1", "tool": "bash"},
            {"kind": "toolStream", "toolSeq": scratch["toolSeq"], "stream": "stdout", "dataBase64": base64.b64encode(b"\x00\xff").decode()},
            # toolStream text is a BlobRef position (protocol §15.4): a large one is stored as a blob
            {"kind": "toolStream", "toolSeq": scratch["toolSeq"], "stream": "stdout", "text": big},
            {"kind": "toolFinish", "toolSeq": scratch["toolSeq"], "requestId": "req-1", "success": True, "exitCode": 0},
            {"kind": "api", "direction": "response", "payload": {"text": "done"}},
        ])
        runtime = sc.read_all(rid, kinds=["api", "toolStream"])
        check([r.get("apiSeq") for r in runtime if r["kind"] == "api"] == [1, 1], "a response pairs with its request's apiSeq")
        check(base64.b64decode(runtime[1]["dataBase64"]) == b"\x00\xff", "binary tool output round-trips")
        ref = runtime[2]["text"]
        check(isinstance(ref, dict) and ref["bytes"] == len(big), "a 300 KB string is stored as a blob reference")
        check(sc.read_blob(rid, ref).decode() == big, "read_blob streams it back")
        sc.set_state(rid, "bashState", {"cwd": "/tmp"})
        check(sc.get_state(rid, "bashState") == {"cwd": "/tmp"} and sc.delete_state(rid, "bashState"), "state set/get/delete")


    # Lifecycle errors.
    sc = Sidecar(store=store, framing=framing).spawn()
    try:
        raises(ss.ServerNotInitialized, lambda: sc.list(), "a request before initialize raises ServerNotInitialized")
        raises(ss.UnsupportedProtocolVersion, lambda: sc.request("initialize", {"protocolVersion": 99}),
               "initialize with protocol version 99 raises UnsupportedProtocolVersion")
    finally:
        sc.stop()
    check(not notes or all(isinstance(m, str) for m, _ in notes), f"notifications received: {[m for m, _ in notes]}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store")
    parser.add_argument("--framing", choices=("ndjson", "lsp"), default="ndjson")
    opts = parser.parse_args()
    store = opts.store or tempfile.mkdtemp(prefix="session-sidecar-selftest-")
    try:
        run(store, opts.framing)
    except CheckFailed as e:
        print(f"not ok - {e}", flush=True)
        return 1
    print(f"selftest ok ({opts.framing})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
