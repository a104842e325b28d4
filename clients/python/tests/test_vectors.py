"""protocol/vectors.json, the language-neutral test vectors (protocol/README.md §16.1 "Test
vectors"): every scenario replayed through this client's generic ``Sidecar.request(method,
params)`` against a fresh sidecar on a fresh, empty store, each answer normalized as §16.1 says
and compared with the file's ``expect`` as parsed JSON (the reference: test/vectors/normalize.ts).

Member order: ``json.loads`` keeps an object's members in the order received (dicts are
ordered), so ULIDs are numbered ``<id:N>`` in the order the server sent them.
"""

from __future__ import annotations

import json
import os
import re
import unittest
from typing import Any

from helpers import FRAMING, REPO, command, temp_store

from session_sidecar import Sidecar, SidecarError
from session_sidecar.errors import SidecarExited

VECTORS = os.environ.get("SIDECAR_PROTOCOL_VECTORS") or os.path.join(REPO, "protocol", "vectors.json")
ULID = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")
TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
ID_REF = re.compile(r"<id:\d+>")


class Normalizer:
    """§16.1's normalization of one scenario's answers (and substitution into its requests)."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}     # ULID -> <id:N>
        self.actual: dict[str, str] = {}  # <id:N> -> ULID
        self.root: str | None = None

    def _id(self, m: re.Match[str]) -> str:
        u = m.group(0)
        n = self.ids.get(u)
        if n is None:
            n = f"<id:{len(self.ids) + 1}>"
            self.ids[u] = n
            self.actual[n] = u
        return n

    def normalize(self, v: Any, key: str = "", parent: str = "") -> Any:
        if isinstance(v, str):
            if key == "version" and parent == "serverInfo":
                return "<version>"
            s = v.replace(self.root, "<root>") if self.root else v
            return TS.sub("<ts>", ULID.sub(self._id, s))
        if isinstance(v, list):
            return [self.normalize(x, "", parent) for x in v]
        if isinstance(v, dict):  # members in the order received
            return {k: self.normalize(x, k, key) for k, x in v.items()}
        return v

    def substitute(self, v: Any) -> Any:
        if isinstance(v, str):
            return ID_REF.sub(lambda m: self.actual.get(m.group(0), m.group(0)), v)
        if isinstance(v, list):
            return [self.substitute(x) for x in v]
        if isinstance(v, dict):
            return {k: self.substitute(x) for k, x in v.items()}
        return v


def load_vectors() -> dict[str, list[dict[str, Any]]]:
    with open(VECTORS, encoding="utf-8") as f:
        return json.load(f)["scenarios"]


def error_as_received(e: SidecarError) -> dict[str, Any]:
    """The JSON-RPC error object the client received: code, message and (when sent) data."""
    out: dict[str, Any] = {"code": e.code, "message": e.message}
    if e.data is not None:
        out["data"] = e.data
    return out


def replay(case: unittest.TestCase, steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each step's normalized answer, from a fresh sidecar on a fresh store."""
    sc = Sidecar(store=temp_store(case), command=command(), framing=FRAMING, timeout=60.0)
    sc.spawn()  # no initialize: the scenario's first step is it
    norm = Normalizer()
    answers: list[dict[str, Any]] = []
    try:
        for i, step in enumerate(steps):
            try:
                result = sc.request(step["method"], norm.substitute(step.get("params")))
            except SidecarExited:
                raise
            except SidecarError as e:
                answers.append({"error": norm.normalize(error_as_received(e))})
                continue
            if i == 0:
                norm.root = result["store"]["root"]
                sc.notify("initialized", {})
            answers.append({"result": norm.normalize(result)})
    finally:
        sc.kill()
    return answers


class VectorsFile(unittest.TestCase):
    def test_every_scenario_begins_with_initialize(self) -> None:
        scenarios = load_vectors()
        self.assertGreaterEqual(len(scenarios), 10)
        for name, steps in scenarios.items():
            with self.subTest(scenario=name):
                self.assertEqual(steps[0]["method"], "initialize")
                for step in steps:
                    self.assertEqual(len(step["expect"]), 1)
                    self.assertIn(next(iter(step["expect"])), ("result", "error"))

    def test_ids_are_numbered_by_first_appearance_in_member_order(self) -> None:
        a, b = "01ARZ3NDEKTSV4RRFFQ69G5FAV", "01BX5ZZKBKACTAV9WEVGEMMVRY"
        norm = Normalizer()
        got = norm.normalize({"z": f"x {b}", "a": [a, b], "at": "2026-01-02T03:04:05.678Z"})
        self.assertEqual(list(got.items()), [("z", "x <id:1>"), ("a", ["<id:2>", "<id:1>"]), ("at", "<ts>")])
        self.assertEqual(norm.substitute({"s": ["<id:2>", "<id:9>"]}), {"s": [a, "<id:9>"]})


class Vectors(unittest.TestCase):
    """One test per scenario of protocol/vectors.json (added below)."""


def _scenario_test(name: str) -> Any:
    def test(self: unittest.TestCase) -> None:
        steps = load_vectors()[name]
        answers = replay(self, steps)
        self.assertEqual(len(answers), len(steps))
        for i, (step, got) in enumerate(zip(steps, answers)):
            self.assertEqual(got, step["expect"], f"{name} step {i} ({step['method']})")
    test.__doc__ = f"protocol/vectors.json scenario {name!r}: every answer is the one the file holds"
    return test


for _name in load_vectors():
    setattr(Vectors, f"test_{re.sub(r'[^0-9A-Za-z_]', '_', _name)}", _scenario_test(_name))


if __name__ == "__main__":
    unittest.main()
