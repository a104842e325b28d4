"""The thread client Sidecar against the real binary (examples/python/selftest.py covers the
rest): a command line as a string, notifications on the queue, rewind when advertised."""

from __future__ import annotations

import shlex
import unittest

from helpers import FRAMING, REWIND_SKIP, command, has_rewind, temp_store

import session_sidecar as ss
from session_sidecar import Sidecar


def msg(text: str) -> dict[str, object]:
    return {"kind": "message", "message": {"role": "user", "content": text}}


class SidecarTest(unittest.TestCase):
    def test_command_line_string_subscribe_and_notifications(self) -> None:
        with Sidecar(store=temp_store(self), command=shlex.join(command()), framing=FRAMING) as sc:
            sid = sc.create()["sessionId"]
            self.assertEqual(sc.subscribe(sid), {"lastSeq": 0})
            sc.append(sid, [msg("a"), msg("b")])
            seqs: list[int] = []
            while seqs != [1, 2]:
                method, params = sc.notifications.get(timeout=20)
                if method == "session/didAppend":
                    seqs.extend(r["seq"] for r in params["records"])
            self.assertEqual(sc.unsubscribe(sid), {})
            with self.assertRaises(ss.InvalidSessionId):
                sc.read("../x")
        self.assertEqual(sc.returncode, 0)

    @unittest.skipUnless(has_rewind(), REWIND_SKIP)
    def test_rewind(self) -> None:
        with Sidecar(store=temp_store(self), command=command(), framing=FRAMING) as sc:
            sid = sc.create()["sessionId"]
            sc.append(sid, [msg("a"), msg("b")])
            r = sc.rewind(sid, 1, expected_last_seq=2)
            self.assertEqual((r["seq"], r["toSeq"]), (3, 1))
            self.assertEqual([m["content"] for m in sc.context(sid)["messages"]], ["a"])
            with self.assertRaises(ss.Conflict):
                sc.rewind(sid, 0, expected_last_seq=2)


if __name__ == "__main__":
    unittest.main()
