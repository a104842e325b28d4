"""The exception classes cannot drift from the protocol: every error kind and code of
protocol/meta.json has its class, and error_from_response picks it."""

from __future__ import annotations

import json
import unittest

from helpers import META

import session_sidecar as ss


class ErrorsMatchTheProtocol(unittest.TestCase):
    def setUp(self) -> None:
        with open(META, encoding="utf-8") as f:
            self.meta = json.load(f)["errors"]

    def test_every_domain_kind_has_a_class_with_its_code(self) -> None:
        kinds = {e["kind"]: e["code"] for e in self.meta["domain"]}
        self.assertTrue(kinds, "protocol/meta.json lists no domain errors")
        missing = sorted(k for k in kinds if k not in ss.DOMAIN_ERRORS)
        self.assertEqual(missing, [], f"data.kind values of protocol/meta.json without an exception class: {missing}")
        for kind, code in kinds.items():
            cls = ss.DOMAIN_ERRORS[kind][1]
            with self.subTest(kind=kind):
                self.assertEqual(ss.DOMAIN_ERRORS[kind][0], code)
                self.assertEqual(cls.__name__, kind)
                self.assertTrue(issubclass(cls, ss.SidecarError))
                self.assertIs(getattr(ss, kind), cls, "exported from session_sidecar")
                self.assertIn(kind, ss.__all__)
                e = ss.error_from_response({"code": code, "message": "m", "data": {"kind": kind}})
                self.assertIs(type(e), cls)
                self.assertEqual((e.code, e.message, e.kind), (code, "m", kind))
                self.assertIs(type(ss.error_from_response({"code": code, "message": "m"})), cls, "by code alone")

    def test_no_class_for_a_kind_the_protocol_does_not_have(self) -> None:
        kinds = {e["kind"] for e in self.meta["domain"]}
        self.assertEqual(sorted(set(ss.DOMAIN_ERRORS) - kinds), [])

    def test_every_json_rpc_error_has_a_class_with_its_code(self) -> None:
        codes: dict[str, int] = self.meta["jsonRpc"]
        self.assertEqual({k: v[0] for k, v in ss.JSONRPC_ERRORS.items()}, codes)
        for name, code in codes.items():
            with self.subTest(name=name):
                e = ss.error_from_response({"code": code, "message": "m"})
                self.assertIs(type(e), getattr(ss, name))
                self.assertIsNone(e.kind)

    def test_unknown_kind_is_a_plain_sidecar_error(self) -> None:
        e = ss.error_from_response({"code": -31003, "message": "m", "data": {"kind": "FutureKind"}})
        self.assertIs(type(e), ss.SidecarError)
        self.assertEqual(e.kind, "FutureKind")
        self.assertIs(type(ss.error_from_response({"code": -31098, "message": "m"})), ss.SidecarError)
        self.assertIs(type(ss.error_from_response("junk")), ss.SidecarError)  # type: ignore[arg-type]

    def test_json_rpc_kinds(self) -> None:
        for kind, code, cls in (("RequestCancelled", -32800, ss.RequestCancelled), ("Internal", -32603, ss.InternalError),
                                ("InvalidParams", -32602, ss.InvalidParams)):
            with self.subTest(kind=kind):
                e = ss.error_from_response({"code": code, "message": "m", "data": {"kind": kind}})
                self.assertIs(type(e), cls)
                self.assertEqual(e.kind, kind)
        e = ss.error_from_response({"code": -32602, "message": "m", "data": {"kind": "SomeNewDetail"}})
        self.assertIs(type(e), ss.InvalidParams, "a JSON-RPC code keeps its class under an unknown kind")

    def test_invalid_params_issues(self) -> None:
        e = ss.error_from_response({"code": -32602, "message": "m",
                                    "data": {"kind": "InvalidParams", "issues": [{"path": "x", "message": "y"}]}})
        self.assertIsInstance(e, ss.InvalidParams)
        self.assertEqual(e.issues, [{"path": "x", "message": "y"}])  # type: ignore[attr-defined]


if __name__ == "__main__":
    unittest.main()
