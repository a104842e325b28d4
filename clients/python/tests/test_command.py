"""Which sidecar is spawned: command= (list or string), else SESSION_SIDECAR_COMMAND, else
session-sidecar on PATH; SidecarNotFound when none. The last tests spawn the real binary."""

from __future__ import annotations

import os
import shlex
import stat
import unittest
from unittest import mock

from helpers import FRAMING, command, temp_store

import session_sidecar as ss
from session_sidecar import resolve_command


def fake_executable(case: unittest.TestCase, directory: str, name: str = "session-sidecar") -> str:
    path = os.path.join(directory, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write("#!/bin/sh\nexit 0\n")
    os.chmod(path, stat.S_IRWXU)
    return path


class ResolveCommand(unittest.TestCase):
    def test_command_list_is_used_as_given(self) -> None:
        self.assertEqual(resolve_command(["node", "/x y/cli.js"], env={}), ["node", "/x y/cli.js"])

    def test_command_string_is_split_with_shlex(self) -> None:
        self.assertEqual(resolve_command("node '/x y/cli.js' --flag", env={}), ["node", "/x y/cli.js", "--flag"])

    def test_command_wins_over_the_environment_and_path(self) -> None:
        d = temp_store(self)
        fake_executable(self, d)
        env = {"SESSION_SIDECAR_COMMAND": "from-env", "PATH": d}
        self.assertEqual(resolve_command(["given"], env=env), ["given"])

    def test_environment_variable_is_a_command_line(self) -> None:
        d = temp_store(self)
        fake_executable(self, d)
        env = {"SESSION_SIDECAR_COMMAND": "node \"/a b/cli.js\" --x", "PATH": d}
        self.assertEqual(resolve_command(None, env=env), ["node", "/a b/cli.js", "--x"])

    def test_path_lookup_when_nothing_else(self) -> None:
        d = temp_store(self)
        exe = fake_executable(self, d)
        self.assertEqual(resolve_command(None, env={"PATH": d}), [exe])
        self.assertEqual(resolve_command(None, env={"PATH": d, "SESSION_SIDECAR_COMMAND": "  "}), [exe],
                         "a blank variable counts as unset")

    def test_none_found_is_a_clear_error(self) -> None:
        d = temp_store(self)
        fake_executable(self, d, "something-else")
        with self.assertRaises(ss.SidecarNotFound) as cm:
            resolve_command(None, env={"PATH": d})
        self.assertIsInstance(cm.exception, FileNotFoundError)
        for hint in ("command=", "SESSION_SIDECAR_COMMAND", "session-sidecar"):
            self.assertIn(hint, str(cm.exception))

    def test_empty_command_is_refused(self) -> None:
        with self.assertRaises(ValueError):
            resolve_command([], env={})
        with self.assertRaises(ValueError):
            resolve_command("  ", env={})

    def test_clients_raise_at_construction_when_none_found(self) -> None:
        d = temp_store(self)
        with mock.patch.dict(os.environ, {"PATH": d}, clear=False):
            os.environ.pop("SESSION_SIDECAR_COMMAND", None)
            with self.assertRaises(ss.SidecarNotFound):
                ss.Sidecar()
            with self.assertRaises(ss.SidecarNotFound):
                ss.AsyncSidecar()


class SpawnsTheRealBinary(unittest.TestCase):
    def test_sidecar_from_the_environment_variable(self) -> None:
        line = shlex.join(command())
        with mock.patch.dict(os.environ, {"SESSION_SIDECAR_COMMAND": line}):
            with ss.Sidecar(store=temp_store(self), framing=FRAMING) as sc:
                self.assertEqual((sc.server_info or {}).get("protocolVersion"), 1)
        self.assertEqual(sc.returncode, 0)

    def test_sidecar_from_path(self) -> None:
        d = temp_store(self)
        path = os.path.join(d, "session-sidecar")
        with open(path, "w", encoding="utf-8") as f:
            f.write(f"#!/bin/sh\nexec {shlex.join(command())} \"$@\"\n")
        os.chmod(path, stat.S_IRWXU)
        env = {"PATH": d + os.pathsep + os.environ.get("PATH", "")}
        with mock.patch.dict(os.environ, env):
            os.environ.pop("SESSION_SIDECAR_COMMAND", None)
            sc = ss.Sidecar(store=temp_store(self), framing=FRAMING)
            self.assertEqual(sc.command, [path])
            with sc:
                self.assertEqual((sc.server_info or {}).get("serverInfo", {}).get("name"), "session-sidecar")
        self.assertEqual(sc.returncode, 0)


if __name__ == "__main__":
    unittest.main()
