"""A minimal PEP 517 / PEP 660 build backend, standard library only.

Why in-tree: ``pip install --no-build-isolation`` uses whatever backend is installed, and
setuptools without the ``wheel`` package (as on a plain pyenv/python.org install) cannot build
a wheel. This backend needs nothing but Python 3.11+ (tomllib), so the client installs offline
anywhere pip does. It builds a pure-Python wheel of ``src/<package>`` (every file), an sdist of
the project tree, and an editable wheel (a .pth pointing at ``src``).
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import tarfile
import tomllib
import zipfile
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SKIP_DIRS = {"__pycache__", ".mypy_cache", "build", "dist", ".git"}


def _project() -> tuple[dict[str, Any], str]:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        doc = tomllib.load(f)
    return doc["project"], doc["tool"]["sidecar-build"]["package"]


def _dist_name(project: dict[str, Any]) -> str:
    return project["name"].replace("-", "_")


def _metadata(project: dict[str, Any]) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project.get('description', '')}",
        f"Requires-Python: {project.get('requires-python', '')}",
    ]
    lic = project.get("license", {})
    if isinstance(lic, dict) and "text" in lic:
        lines.append(f"License: {lic['text']}")
    lines += [f"Classifier: {c}" for c in project.get("classifiers", [])]
    readme = project.get("readme")
    body = ""
    if isinstance(readme, str) and os.path.exists(os.path.join(ROOT, readme)):
        lines.append("Description-Content-Type: text/markdown")
        with open(os.path.join(ROOT, readme), encoding="utf-8") as f:
            body = f.read()
    return "\n".join(lines) + "\n\n" + body


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _package_files(package: str) -> list[tuple[str, str]]:
    """(archive name, file path) of every file of src/<package>, sorted."""
    base = os.path.join(ROOT, "src")
    out: list[tuple[str, str]] = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(base, package)):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            if name.endswith((".pyc", ".pyo")):
                continue
            path = os.path.join(dirpath, name)
            out.append((os.path.relpath(path, base).replace(os.sep, "/"), path))
    return out


def _write_wheel(wheel_directory: str, files: list[tuple[str, bytes]]) -> str:
    project, _ = _project()
    dist, version = _dist_name(project), project["version"]
    info = f"{dist}-{version}.dist-info"
    files = [
        *files,
        (f"{info}/METADATA", _metadata(project).encode("utf-8")),
        (f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: sidecar_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
    ]
    record = [_record_line(n, d) for n, d in files] + [f"{info}/RECORD,,"]
    files.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode()))
    filename = f"{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files:
            zi = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(zi, data)
    return filename


# -- PEP 517 hooks ------------------------------------------------------------------------

def get_requires_for_build_wheel(config_settings: Any = None) -> list[str]:
    return []


def get_requires_for_build_sdist(config_settings: Any = None) -> list[str]:
    return []


def get_requires_for_build_editable(config_settings: Any = None) -> list[str]:
    return []


def build_wheel(wheel_directory: str, config_settings: Any = None, metadata_directory: Any = None) -> str:
    _, package = _project()
    files = []
    for name, path in _package_files(package):
        with open(path, "rb") as f:
            files.append((name, f.read()))
    return _write_wheel(wheel_directory, files)


def build_editable(wheel_directory: str, config_settings: Any = None, metadata_directory: Any = None) -> str:
    project, _ = _project()
    pth = (os.path.join(ROOT, "src") + "\n").encode()
    return _write_wheel(wheel_directory, [(f"_{_dist_name(project)}_editable.pth", pth)])


def build_sdist(sdist_directory: str, config_settings: Any = None) -> str:
    project, _ = _project()
    stem = f"{_dist_name(project)}-{project['version']}"
    filename = f"{stem}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz") as tar:
        for top in ("pyproject.toml", "README.md", "_build", "src", "tests"):
            path = os.path.join(ROOT, top)
            if os.path.exists(path):
                tar.add(path, arcname=f"{stem}/{top}",
                        filter=lambda ti: None if os.path.basename(ti.name) in _SKIP_DIRS or ti.name.endswith(".pyc") else ti)
        info = tarfile.TarInfo(f"{stem}/PKG-INFO")
        data = _metadata(project).encode("utf-8")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return filename
