"""The developer's app, as rokuprof prepares it for a profiled run: its manifest with the
profiler's keys set (:mod:`~rokuprof.app.manifest`, pure), its files zipped in memory
(:mod:`~rokuprof.app.package`), ``.rokuignore`` patterns (:mod:`~rokuprof.app.ignore`, pure).

Names load on first use: importing the pure modules loads no file or zip machinery.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rokuprof._lazy import lazy_names

if TYPE_CHECKING:
    from rokuprof.app.ignore import IgnoreRules
    from rokuprof.app.manifest import (
        MANIFEST_KEYS_DOC,
        ProfilerKeys,
        parse_manifest,
        profiled_manifest,
        profiler_settings,
    )
    from rokuprof.app.package import PackagedApp, PackageError, package_app

_HOMES = {
    "IgnoreRules": "ignore",
    **dict.fromkeys(
        [
            "MANIFEST_KEYS_DOC",
            "ProfilerKeys",
            "parse_manifest",
            "profiled_manifest",
            "profiler_settings",
        ],
        "manifest",
    ),
    **dict.fromkeys(["PackagedApp", "PackageError", "package_app"], "package"),
}

__all__ = [
    "MANIFEST_KEYS_DOC",
    "IgnoreRules",
    "PackageError",
    "PackagedApp",
    "ProfilerKeys",
    "package_app",
    "parse_manifest",
    "profiled_manifest",
    "profiler_settings",
]

__getattr__ = lazy_names(__name__, _HOMES)
