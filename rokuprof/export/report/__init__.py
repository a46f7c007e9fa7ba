"""``rokuprof report``: a capture as one self-contained, interactive HTML page (pure core).

:func:`build_model` turns an :class:`~rokuprof.export.model.ExportInput` into the page's data
(compact JSON columns), :func:`render_html` wraps it with the bundled script and stylesheet::

    html = render_html(build_model(input_from_bytes(data)))

:func:`export` is the same as bytes, for the exporter registry (format ``report``).
A session directory's page, with its marks and device vitals on the timeline, is made by
:mod:`rokuprof.export.report.session` (the one module here that reads files; not imported here).
"""

from __future__ import annotations

from rokuprof.export.model import ExportInput
from rokuprof.export.report.model import SCHEMA, build_model
from rokuprof.export.report.page import embed_json, render_html


def export(inp: ExportInput) -> bytes:
    """The report page of ``inp`` as UTF-8 bytes."""
    return render_html(build_model(inp)).encode("utf-8")


__all__ = ["SCHEMA", "build_model", "embed_json", "export", "render_html"]
