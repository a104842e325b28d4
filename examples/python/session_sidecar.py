"""The examples' view of the session_sidecar package (clients/python/src/session_sidecar).

The client lives in one place, the installable package under clients/python/. This file loads
that package under its own name (``import session_sidecar`` from examples/python/ gets the
package itself), and makes ``Sidecar`` default to this repository's built CLI
(``node dist/src/cli.js``) unless a command is given or SESSION_SIDECAR_COMMAND is set, so the
examples run against the tree they are in. ``pip install ./clients/python`` for your own code.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
_PACKAGE = os.path.normpath(os.path.join(_HERE, "..", "..", "clients", "python", "src", "session_sidecar"))

#: The built CLI of this repository (examples/python/ -> dist/src/cli.js).
DEFAULT_CLI = os.path.normpath(os.path.join(_HERE, "..", "..", "dist", "src", "cli.js"))

_spec = importlib.util.spec_from_file_location(__name__, os.path.join(_PACKAGE, "__init__.py"),
                                               submodule_search_locations=[_PACKAGE])
assert _spec is not None and _spec.loader is not None
_package = importlib.util.module_from_spec(_spec)
sys.modules[__name__] = _package  # the import of this file now yields the package
_spec.loader.exec_module(_package)


class Sidecar(_package.Sidecar):  # type: ignore[name-defined, misc]
    """``session_sidecar.Sidecar`` whose default command is this repository's built CLI."""

    def __init__(self, *args: Any, command: Any = None, **kwargs: Any) -> None:
        if command is None and not os.environ.get(_package.ENV_VAR, "").strip():
            if not os.path.exists(DEFAULT_CLI):
                raise FileNotFoundError(f"{DEFAULT_CLI} does not exist: run `npm run build` first")
            command = ["node", DEFAULT_CLI]
        super().__init__(*args, command=command, **kwargs)


_package.Sidecar = Sidecar
_package.DEFAULT_CLI = DEFAULT_CLI
