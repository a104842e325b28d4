"""Shared by the tests: the sidecar under test, the framing, temp stores, protocol/meta.json.

The tests run against a real sidecar: $SESSION_SIDECAR_COMMAND when set (test/clients/
python.test.ts sets it to the repository's built dist/src/cli.js), else the build of the
repository this package is in. SIDECAR_TEST_FRAMING selects ndjson (default) or lsp.
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import sys
import tempfile
import unittest
from typing import Any

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.normpath(os.path.join(HERE, "..", "src"))
if SRC not in sys.path:
    sys.path.insert(0, SRC)

REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
META = os.environ.get("SIDECAR_PROTOCOL_META") or os.path.join(REPO, "protocol", "meta.json")
FRAMING = os.environ.get("SIDECAR_TEST_FRAMING", "ndjson")
_BUILT = os.path.join(REPO, "dist", "src", "cli.js")


if not os.environ.get("SESSION_SIDECAR_COMMAND", "").strip() and os.path.exists(_BUILT):
    # What a SidecarSession(store=...) spawns by itself in these tests: this repository's build.
    os.environ["SESSION_SIDECAR_COMMAND"] = shlex.join(["node", _BUILT])


def command() -> list[str]:
    line = os.environ.get("SESSION_SIDECAR_COMMAND", "").strip()
    if line:
        return shlex.split(line)
    if not os.path.exists(_BUILT):
        raise unittest.SkipTest(f"no sidecar: set SESSION_SIDECAR_COMMAND or run `npm run build` ({_BUILT})")
    return ["node", _BUILT]


def temp_store(case: unittest.TestCase) -> str:
    path = tempfile.mkdtemp(prefix="sidecar-py-test-")
    case.addCleanup(shutil.rmtree, path, True)
    return path


@functools.cache
def capabilities() -> dict[str, Any]:
    """The capabilities the sidecar under test advertises in initialize."""
    from session_sidecar import Sidecar
    store = tempfile.mkdtemp(prefix="sidecar-py-caps-")
    try:
        with Sidecar(store=store, command=command(), framing=FRAMING) as sc:
            return dict((sc.server_info or {}).get("capabilities") or {})
    finally:
        shutil.rmtree(store, True)


def has_rewind() -> bool:
    return bool(capabilities().get("session", {}).get("rewind"))


REWIND_SKIP = ("the sidecar under test does not advertise capabilities.session.rewind "
               "(session/rewind, issue 18): pop_item/clear_session tests skipped")
