"""Request params of the convenience methods, built once for both clients (``Sidecar`` and
``AsyncSidecar``): each function returns ``(method, params)``."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

Call = tuple[str, dict[str, Any]]


def _put(params: dict[str, Any], name: str, value: Any) -> None:
    if value is not None:
        params[name] = value


def create(params: Mapping[str, Any], idempotency_key: str | None = None) -> Call:
    out = dict(params)
    if idempotency_key is not None:
        if "idempotencyKey" in out and out["idempotencyKey"] != idempotency_key:
            raise ValueError("idempotency_key and idempotencyKey differ")
        out["idempotencyKey"] = idempotency_key
    return "session/create", out


def open(session_id: str | None, mode: str, path: str | None, secrets: Mapping[str, Any] | None) -> Call:
    params: dict[str, Any] = {"path": path} if path is not None else {"sessionId": session_id}
    params["mode"] = mode
    _put(params, "secrets", dict(secrets) if secrets is not None else None)
    return "session/open", params


def append(session_id: str, records: Sequence[Mapping[str, Any]], expected_last_seq: int | None,
           idempotency_key: str | None = None) -> Call:
    params: dict[str, Any] = {"sessionId": session_id, "records": [dict(r) for r in records]}
    _put(params, "expectedLastSeq", expected_last_seq)
    _put(params, "idempotencyKey", idempotency_key)
    return "session/append", params


def update(session_id: str, title: str | None, metadata: Mapping[str, Any] | None,
           tags: Sequence[str] | None, idempotency_key: str | None) -> Call:
    if isinstance(tags, str):
        raise TypeError("tags must be a sequence of strings, not a string")
    params: dict[str, Any] = {"sessionId": session_id}
    _put(params, "title", title)
    _put(params, "metadata", dict(metadata) if metadata is not None else None)
    _put(params, "tags", list(tags) if tags is not None else None)
    _put(params, "idempotencyKey", idempotency_key)
    return "session/update", params


def read(session_id: str, after_seq: int | None, limit: int | None, kinds: Sequence[str] | None,
         inline: bool, generation: int | None = None) -> Call:
    params: dict[str, Any] = {"sessionId": session_id}
    if inline:
        params["inline"] = True
    _put(params, "afterSeq", after_seq)
    _put(params, "limit", limit)
    _put(params, "kinds", list(kinds) if kinds is not None else None)
    _put(params, "generation", generation)
    return "session/read", params


def list_(limit: int | None, cursor: str | None) -> Call:
    params: dict[str, Any] = {}
    _put(params, "limit", limit)
    _put(params, "cursor", cursor)
    return "session/list", params


def session(method: str, session_id: str, **extra: Any) -> Call:
    """A method whose params are the session id and optional members (None left out)."""
    params: dict[str, Any] = {"sessionId": session_id}
    for name, value in extra.items():
        _put(params, name, value)
    return method, params


def rewind(session_id: str, to_seq: int, expected_last_seq: int | None) -> Call:
    return session("session/rewind", session_id, toSeq=to_seq, expectedLastSeq=expected_last_seq)


def subscribe(session_id: str, after_seq: int | None) -> Call:
    return session("session/subscribe", session_id, afterSeq=after_seq)
