"""The app a sideloaded package holds, as the simulator plays it: the package's BrightScript and
component XML read from the zip (bounded: a package is a peer's bytes), and the model built from
them (:mod:`.app_from_source`). Runs off the event loop (the installer calls it in a thread)."""

from __future__ import annotations

import io
import logging
import posixpath
import zipfile

from rokuprof.simulator.app_from_source import build_model
from rokuprof.simulator.app_model import AppModel
from rokuprof.simulator.app_scopes import MAX_FILES

log = logging.getLogger(__name__)

MAX_SOURCE_BYTES = 8 << 20  # uncompressed source read from one package
MAX_FILE_BYTES = 2 << 20  # of one file
SOURCE_SUFFIXES = (".brs", ".xml")


def package_sources(archive: bytes) -> dict[str, str]:
    """``pkg:/`` path -> text of each ``.brs`` and ``.xml`` file in the package (a zip), in
    the zip's order, within the byte and file caps; unreadable members are skipped."""
    sources: dict[str, str] = {}
    budget = MAX_SOURCE_BYTES
    try:
        package = zipfile.ZipFile(io.BytesIO(archive))
        members = package.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return sources
    for info in members:
        if len(sources) >= MAX_FILES or budget <= 0:
            break
        name = posixpath.normpath("/" + info.filename.replace("\\", "/")).lstrip("/")
        if info.is_dir() or not name.lower().endswith(SOURCE_SUFFIXES):
            continue
        limit = min(MAX_FILE_BYTES, budget)
        try:
            with package.open(info) as member:
                data = member.read(limit + 1)[:limit]
        except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, RuntimeError):
            continue
        budget -= len(data)
        sources[f"pkg:/{name}"] = data.decode("utf-8", "replace").removeprefix("\ufeff")
    return sources


def package_model(archive: bytes, app_name: str) -> AppModel | None:
    """The model of the app in ``archive``; None when it holds no BrightScript function (the
    simulator's built-in model then runs)."""
    model = build_model(app_name, package_sources(archive))
    if not model.threads:
        return None
    for note in model.notes:
        log.warning("%s: %s", model.name, note)
    return model
