"""Typed exceptions: one class per documented ``error.data.kind`` (protocol/README.md §6).

``error_from_response`` picks the class by ``data.kind`` first, then by ``code``. A unittest
(tests/test_errors.py) compares ERRORS_BY_KIND and ERRORS_BY_CODE with protocol/meta.json, so a
kind added to the protocol without a class here fails the build.
"""

from __future__ import annotations

from typing import Any, Mapping


class SidecarError(Exception):
    """A JSON-RPC error answered by the sidecar.

    ``code`` and ``message`` are the JSON-RPC error's; ``data`` is its ``data`` member (or
    None); ``kind`` is ``data["kind"]`` when the server gave one. The subclass raised is
    selected by ``kind`` (then by ``code``), so ``except Conflict:`` works.
    """

    def __init__(self, code: int | None, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        kind = data.get("kind") if isinstance(data, dict) else None
        self.kind: str | None = kind if isinstance(kind, str) else None

    def __str__(self) -> str:
        return self.message if self.code is None else f"{self.message} (code {self.code})"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r}, data={self.data!r})"


class SidecarExited(SidecarError):
    """The sidecar process ended (or its output became unreadable) before answering.

    Raised by every request pending when that happened, and by any request sent after.
    """

    def __init__(self, message: str, returncode: int | None = None) -> None:
        super().__init__(None, message, None)
        self.returncode = returncode


class SidecarNotFound(FileNotFoundError):
    """No sidecar command: none given, SESSION_SIDECAR_COMMAND unset, no session-sidecar on PATH."""


# -- domain errors (data.kind; codes -31001..) ---------------------------------------------

class SessionNotFound(SidecarError):
    """No session with that id in the store."""


class InvalidSessionId(SidecarError):
    """The session id is not 1-128 chars of [A-Za-z0-9._-] (no "..", no leading ".")."""


class Conflict(SidecarError):
    """expectedLastSeq did not match, or the session is opened for writing elsewhere."""


class Corrupt(SidecarError):
    """The session's files are damaged beyond automatic recovery."""


class UnsafeStore(SidecarError):
    """A store file is not safe to use (permissions, symlinks, ...)."""


class NotWritten(SidecarError):
    """The append was definitely not written; it is safe to retry."""


class RolledBack(SidecarError):
    """The append was written partly and rolled back; nothing of it is stored."""


class Uncertain(SidecarError):
    """The append may or may not be stored; re-open and read to find out."""


class ReadOnly(SidecarError):
    """The session is not open for writing in this process (or was fail-stopped)."""


class PayloadTooLarge(SidecarError):
    """The message or record is larger than the server accepts."""


class UnsupportedProtocolVersion(SidecarError):
    """initialize asked for a protocol version the server does not speak."""


class SecretRejected(SidecarError):
    """A record (or header) holds a registered secret; nothing was written. data: path, rule."""


class InvalidTurnTransition(SidecarError):
    """The turn transition is not allowed now; data["turn"] is the current turn state."""


class SessionLocked(SidecarError):
    """Another process holds the session's writer lease; data["holder"] says which."""


class LeaseLost(SidecarError):
    """This process lost the session's writer lease; the session is read-only here."""


class Unavailable(SidecarError):
    """The store's database cannot be reached; data: reason, retryable, retryAfterMs, outcome."""


class KeyMismatch(SidecarError):
    """The store's encryption key is wrong, missing or unneeded (encryption at rest); data: reason."""


class OutOfRange(SidecarError):
    """A well-formed value outside the session's current range (a rewind's toSeq, a compaction's
    throughSeq); data: path, min, max (inclusive)."""


# -- JSON-RPC / LSP errors -----------------------------------------------------------------

class InvalidParams(SidecarError):
    """-32602: params failed validation; ``issues`` lists [{path, message}]."""

    @property
    def issues(self) -> list[dict[str, str]]:
        return list(self.data.get("issues", [])) if isinstance(self.data, dict) else []


class ParseError(SidecarError):
    """-32700."""


class InvalidRequest(SidecarError):
    """-32600."""


class MethodNotFound(SidecarError):
    """-32601."""


class InternalError(SidecarError):
    """-32603."""


class ServerNotInitialized(SidecarError):
    """-32002: a request before initialize."""


class RequestCancelled(SidecarError):
    """-32800."""


#: Domain error classes by ``data.kind`` (each with its code), as in protocol/meta.json.
DOMAIN_ERRORS: dict[str, tuple[int, type[SidecarError]]] = {
    "SessionNotFound": (-31001, SessionNotFound),
    "InvalidSessionId": (-31002, InvalidSessionId),
    "Conflict": (-31003, Conflict),
    "Corrupt": (-31004, Corrupt),
    "UnsafeStore": (-31005, UnsafeStore),
    "NotWritten": (-31006, NotWritten),
    "RolledBack": (-31007, RolledBack),
    "Uncertain": (-31008, Uncertain),
    "ReadOnly": (-31009, ReadOnly),
    "PayloadTooLarge": (-31010, PayloadTooLarge),
    "UnsupportedProtocolVersion": (-31011, UnsupportedProtocolVersion),
    "SecretRejected": (-31012, SecretRejected),
    "InvalidTurnTransition": (-31013, InvalidTurnTransition),
    "SessionLocked": (-31014, SessionLocked),
    "LeaseLost": (-31015, LeaseLost),
    "Unavailable": (-31016, Unavailable),
    "KeyMismatch": (-31017, KeyMismatch),
    "OutOfRange": (-31018, OutOfRange),
}

#: JSON-RPC and LSP error classes by name (each with its code), as in protocol/meta.json.
JSONRPC_ERRORS: dict[str, tuple[int, type[SidecarError]]] = {
    "ParseError": (-32700, ParseError),
    "InvalidRequest": (-32600, InvalidRequest),
    "MethodNotFound": (-32601, MethodNotFound),
    "InvalidParams": (-32602, InvalidParams),
    "InternalError": (-32603, InternalError),
    "ServerNotInitialized": (-32002, ServerNotInitialized),
    "RequestCancelled": (-32800, RequestCancelled),
}

#: JSON-RPC errors that carry a data.kind (protocol/README.md §6.1).
JSONRPC_KINDS: dict[str, type[SidecarError]] = {
    "InvalidParams": InvalidParams, "Internal": InternalError, "RequestCancelled": RequestCancelled,
}

ERRORS_BY_KIND: dict[str, type[SidecarError]] = {
    **{kind: cls for kind, (_, cls) in DOMAIN_ERRORS.items()},
    **JSONRPC_KINDS,
}

ERRORS_BY_CODE: dict[int, type[SidecarError]] = {
    code: cls for code, cls in [*DOMAIN_ERRORS.values(), *JSONRPC_ERRORS.values()]
}


_JSONRPC_CODES = frozenset(code for code, _ in JSONRPC_ERRORS.values())


def error_from_response(error: Mapping[str, Any]) -> SidecarError:
    """Maps a JSON-RPC error object ``{code, message, data?}`` to the matching exception.

    The class is chosen by ``data.kind`` first, then by ``code``. A kind this client does not
    know keeps the class of a JSON-RPC/LSP code (those never change meaning) and is otherwise
    a plain SidecarError (a domain code is not trusted to mean an older kind).
    """
    if not isinstance(error, Mapping):
        return SidecarError(None, f"malformed error object: {error!r}", None)
    code = error.get("code")
    message = error.get("message")
    if not isinstance(message, str):
        message = "(no message)"
    data = error.get("data")
    kind = data.get("kind") if isinstance(data, dict) else None
    cls: type[SidecarError] | None = ERRORS_BY_KIND.get(kind) if isinstance(kind, str) else None
    if cls is None and isinstance(kind, str):
        by_code = ERRORS_BY_CODE.get(code) if isinstance(code, int) else None
        cls = by_code if by_code is not None and code in _JSONRPC_CODES else SidecarError
    if cls is None:
        cls = ERRORS_BY_CODE.get(code, SidecarError) if isinstance(code, int) else SidecarError
    return cls(code if isinstance(code, int) else None, message, data)


class NotSupported(SidecarError):
    """The sidecar does not advertise a capability this call needs (e.g. session.rewind).

    Raised by the client before sending anything; not a server error kind.
    """
