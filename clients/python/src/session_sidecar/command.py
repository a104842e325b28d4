"""Which sidecar to spawn: ``command=``, else $SESSION_SIDECAR_COMMAND, else session-sidecar on PATH."""

from __future__ import annotations

import os
import shlex
import shutil
from typing import Mapping, Sequence

from .errors import SidecarNotFound

ENV_VAR = "SESSION_SIDECAR_COMMAND"
EXECUTABLE = "session-sidecar"


def resolve_command(command: str | Sequence[str] | None = None,
                    env: Mapping[str, str] | None = None) -> list[str]:
    """The argv prefix of the sidecar (its ``--store`` and other arguments come after).

    1. ``command``: a list of arguments, or one command line (split with ``shlex``);
    2. else the environment variable SESSION_SIDECAR_COMMAND, a command line split with ``shlex``
       (looked up in ``env`` when given, else in ``os.environ``);
    3. else ``session-sidecar`` found on PATH (``shutil.which``).

    Raises SidecarNotFound when none applies, and ValueError for an empty command.
    """
    if command is not None:
        argv = shlex.split(command) if isinstance(command, str) else [os.fspath(a) for a in command]
        if not argv:
            raise ValueError("command is empty")
        return argv
    environ = os.environ if env is None else env
    line = environ.get(ENV_VAR)
    if line is not None and line.strip():
        return shlex.split(line)
    found = shutil.which(EXECUTABLE, path=environ.get("PATH"))
    if found is None:
        raise SidecarNotFound(
            f"no sidecar to run: pass command=, set {ENV_VAR} (e.g. \"node /path/to/dist/src/cli.js\"), "
            f"or put {EXECUTABLE} on PATH (npm install -g session-sidecar)")
    return [found]
