"""The two framings of protocol/README.md §2.1: NDJSON (one message per line) and LSP
(``Content-Length`` headers). Shared by the thread client and the asyncio client."""

from __future__ import annotations

import asyncio
import json
from typing import Any, AsyncIterator, BinaryIO, Iterator, Literal

Framing = Literal["ndjson", "lsp"]
FRAMINGS: tuple[Framing, ...] = ("ndjson", "lsp")


def check_framing(framing: str) -> Framing:
    if framing == "ndjson":
        return "ndjson"
    if framing == "lsp":
        return "lsp"
    raise ValueError("framing must be 'ndjson' or 'lsp'")


def encode(message: Any, framing: Framing) -> bytes:
    # allow_nan=False: NaN and Infinity are not JSON; refused here (ValueError) rather than sent.
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    if framing == "ndjson":
        return body + b"\n"
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _content_length(header: bytes, length: int | None) -> int | None:
    name, sep, value = header.partition(b":")
    if not sep:
        raise ValueError(f"malformed LSP header line: {header[:80]!r}")
    if name.strip().lower() == b"content-length":
        return int(value.strip())
    return length


def read_frames(stream: BinaryIO, framing: Framing) -> Iterator[bytes]:
    """Yields message bodies until EOF. Raises ValueError on a malformed LSP header."""
    if framing == "ndjson":
        for line in stream:
            line = line.strip()
            if line:
                yield line
        return
    while True:
        length: int | None = None
        while True:
            header = stream.readline()
            if not header:
                if length is None:
                    return  # clean EOF between messages
                raise ValueError("EOF inside an LSP header")
            header = header.rstrip(b"\r\n")
            if not header:
                if length is None:
                    continue  # tolerate stray blank lines between frames
                break
            length = _content_length(header, length)
        body = stream.read(length)
        if len(body) < length:
            raise ValueError("EOF inside an LSP body")
        yield body


async def aread_frames(stream: asyncio.StreamReader, framing: Framing) -> AsyncIterator[bytes]:
    """The asyncio version of read_frames (the reader's limit bounds one NDJSON line)."""
    if framing == "ndjson":
        while True:
            line = await stream.readline()
            if not line:
                return
            line = line.strip()
            if line:
                yield line
    while True:
        length: int | None = None
        while True:
            header = await stream.readline()
            if not header:
                if length is None:
                    return
                raise ValueError("EOF inside an LSP header")
            header = header.rstrip(b"\r\n")
            if not header:
                if length is None:
                    continue
                break
            length = _content_length(header, length)
        try:
            yield await stream.readexactly(length)
        except asyncio.IncompleteReadError:
            raise ValueError("EOF inside an LSP body") from None
