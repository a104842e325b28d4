"""Python client for session-sidecar: durable, secret-safe agent sessions over stdio JSON-RPC 2.0.

    from session_sidecar import Sidecar

    with Sidecar(store="/tmp/my-store") as sc:            # spawn + initialize
        sid = sc.create(title="demo")["sessionId"]
        sc.append(sid, [{"kind": "message", "message": {"role": "user", "content": "hi"}}])
        print(sc.read_all(sid))                           # shutdown + exit on leaving

``Sidecar`` (threads), ``AsyncSidecar`` (asyncio: pipelining, ``async for n in
sc.notifications()``), ``SidecarSession`` (the OpenAI Agents SDK Session protocol) and one
exception class per ``error.data.kind`` of the protocol. ``session_sidecar.langgraph.SidecarSaver``
(imported on its own: it needs ``langgraph``) is a LangGraph checkpointer. The sidecar is found from
``command=``, else $SESSION_SIDECAR_COMMAND, else ``session-sidecar`` on PATH.
"""

from __future__ import annotations

from .agents import ITEM_TYPE, SidecarSession, idempotency_key_for
from .aio import AsyncSidecar, Notification
from .client import CLIENT_NAME, CLIENT_VERSION, PROTOCOL_VERSION, Sidecar
from .command import ENV_VAR, resolve_command
from .errors import (
    DOMAIN_ERRORS, ERRORS_BY_CODE, ERRORS_BY_KIND, JSONRPC_ERRORS,
    Conflict, Corrupt, InternalError, InvalidParams, InvalidRequest, InvalidSessionId,
    InvalidTurnTransition, KeyMismatch, LeaseLost, MethodNotFound, NotSupported, NotWritten, OutOfRange, ParseError,
    PayloadTooLarge, ReadOnly, RequestCancelled, RolledBack, SecretRejected, ServerNotInitialized,
    SessionLocked, SessionNotFound, SidecarError, SidecarExited, SidecarNotFound, Unavailable,
    Uncertain, UnsafeStore, UnsupportedProtocolVersion, error_from_response,
)

__version__ = CLIENT_VERSION

__all__ = [
    "Sidecar", "AsyncSidecar", "SidecarSession", "Notification", "ITEM_TYPE", "idempotency_key_for",
    "resolve_command", "ENV_VAR", "PROTOCOL_VERSION", "CLIENT_NAME", "CLIENT_VERSION",
    "error_from_response", "ERRORS_BY_KIND", "ERRORS_BY_CODE", "DOMAIN_ERRORS", "JSONRPC_ERRORS",
    "SidecarError", "SidecarExited", "SidecarNotFound", "NotSupported",
    "SessionNotFound", "InvalidSessionId", "Conflict", "Corrupt", "UnsafeStore", "NotWritten",
    "RolledBack", "Uncertain", "ReadOnly", "PayloadTooLarge", "UnsupportedProtocolVersion",
    "SecretRejected", "InvalidTurnTransition", "SessionLocked", "LeaseLost", "Unavailable", "KeyMismatch",
    "OutOfRange",
    "InvalidParams", "ParseError", "InvalidRequest", "MethodNotFound", "InternalError",
    "ServerNotInitialized", "RequestCancelled",
]
