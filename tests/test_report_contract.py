"""The contract between Python and the report page: rokuprof/export/report/report-model.schema.json
describes the model the Python side writes (model.py, diff_model.py, timeline_extras.py,
source.py), and the page's JSDoc types (assets/src/contract.js, checked by ``npm run typecheck``)
name the same fields. Real models are validated against it: the samples' reports (built in
process), a session's report with marks, vitals and ``--source`` and an A/B page with a verdict
(each written by the command as a process, the model read back out of the page)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from diff_helpers import BUILD_A, BUILD_B, diff_in
from diff_helpers import stream as diff_stream
from report_helpers import make_session, run_cli, stream, vitals_lines

from rokuprof.export import input_from_bytes
from rokuprof.export.report import build_model, embed_json
from tests.viewers import REPO
from tests.viewers.report import model as model_of_page

REPORT = REPO / "rokuprof" / "export" / "report"
SCHEMA = json.loads((REPORT / "report-model.schema.json").read_text(encoding="utf-8"))
CONTRACT = (REPORT / "assets" / "src" / "contract.js").read_text(encoding="utf-8")
SAMPLES = ["cafe-tv-full", "cafe-tv-corrupt", "cafe-tv-cut-short", "cafe-tv-cpu-only"]


def problems(model: dict) -> list[str]:
    validator = jsonschema.Draft202012Validator(SCHEMA)
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:200]}"
        for e in validator.iter_errors(model)
    ]


def as_page_reads_it(model: dict) -> dict:
    """The model as the page parses it (the JSON page.py embeds)."""
    return json.loads(embed_json(model))


@pytest.mark.parametrize("name", SAMPLES)
def test_the_samples_reports_follow_the_schema(name):
    inp = input_from_bytes((REPO / "samples" / f"{name}.bsprof").read_bytes())
    assert problems(as_page_reads_it(build_model(inp))) == []


def test_a_session_report_with_source_follows_the_schema(tmp_path: Path):
    session = make_session(
        tmp_path / "s",
        stream(4.0, line_data=True, memory_ops=True),
        marks=[("home", 1.0), ("play", 2.5)],
        vitals=vitals_lines([(0.5, 20, 1_000_000), (1.5, 35.5, 1_200_000)]),
    )
    out = tmp_path / "report.html"
    proc = run_cli(str(session), "-o", str(out), "--source", str(REPO / "samples" / "app"))
    assert proc.returncode == 0, proc.stderr
    model = model_of_page(out.read_text(encoding="utf-8"))
    assert {"session", "source"} <= model.keys() and model["session"]["marks"]
    assert problems(model) == []


def test_an_ab_page_with_a_verdict_follows_the_schema(tmp_path: Path):
    (tmp_path / "a.bsprof").write_bytes(diff_stream(6.0, **BUILD_A))
    (tmp_path / "b.bsprof").write_bytes(diff_stream(6.0, **BUILD_B))
    proc = diff_in(tmp_path, "a.bsprof", "b.bsprof", "--html", "ab.html", "--fail-over", "1")
    assert (tmp_path / "ab.html").exists(), proc.stderr
    model = model_of_page((tmp_path / "ab.html").read_text(encoding="utf-8"))
    assert model["diff"]["verdict"] and model["diff"]["top"]["regressions"]
    assert problems(model) == []


def test_the_schema_refuses_what_the_page_does_not_know():
    inp = input_from_bytes((REPO / "samples" / "cafe-tv-cpu-only.bsprof").read_bytes())
    good = as_page_reads_it(build_model(inp))
    unknown = json.loads(json.dumps(good))
    unknown["facts"]["newFact"] = 1  # a field added in Python but not in the contract
    missing = json.loads(json.dumps(good))
    del missing["timeline"]["lanes"]
    status = json.loads(json.dumps(good))
    status["facts"]["status"] = "fine"
    for bad, where in ((unknown, "facts"), (missing, "timeline"), (status, "facts/status")):
        found = problems(bad)
        assert found and found[0].startswith(where), found


def typedef_fields(name: str) -> set[str]:
    """The ``@property`` names of a JSDoc typedef in contract.js (its own block)."""
    block = re.search(rf"/\*\*((?:(?!\*/).)*?@typedef \{{object\}} {name}\n.*?)\*/", CONTRACT, re.S)
    assert block, f"no typedef {name} in contract.js"
    return set(re.findall(r"@property \{.*?\} \[?(\w+)", block.group(1)))


@pytest.mark.parametrize(
    ("typedef", "schema"),
    [
        ("ReportModel", SCHEMA),
        ("ReportFacts", SCHEMA["$defs"]["facts"]),
        ("ReportTotals", SCHEMA["properties"]["totals"]),
        ("ReportPaths", SCHEMA["properties"]["paths"]),
        ("ReportTimeline", SCHEMA["properties"]["timeline"]),
        ("ReportSession", SCHEMA["properties"]["session"]),
        ("ReportSource", SCHEMA["properties"]["source"]),
        ("DiffSide", SCHEMA["$defs"]["side"]),
        ("ReportDiff", SCHEMA["$defs"]["diff"]),
    ],
)
def test_the_page_types_mirror_the_schema(typedef, schema):
    assert typedef_fields(typedef) == set(schema["properties"])
