"""speedscope exports: valid against speedscope's schema, and the speedscope app (headless
Chromium) imports them without a complaint and shows our totals in its Sandwich view.

One browser run for the whole module: both samples plus a deliberately broken file.
"""

from __future__ import annotations

import json

import pytest

from rokuprof.export import export, input_from_bytes
from rokuprof.export.names import NAME_LIMIT
from rokuprof.simulator.worst_cases import long_names
from tests.viewers import speedscope
from tests.viewers.expected import SAMPLE_PERIOD_US, differences
from tests.viewers.samples import VIEWER_SAMPLES, expected, write_export

pytestmark = pytest.mark.slow

#: profile kind (name suffix) -> our figure
KINDS = {"wall": "wall", "cpu": "cpu", "alloc bytes": "alloc_bytes", "timeline": "wall"}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    directory = tmp_path_factory.mktemp("speedscope")
    out = {
        name: write_export(name, "speedscope", directory, ".speedscope.json")
        for name in VIEWER_SAMPLES
    }
    # The same export with one weight missing: speedscope must refuse it.
    doc = json.loads(out["cafe-tv-full"].read_text())
    sampled = next(p for p in doc["profiles"] if p["type"] == "sampled")
    sampled["weights"].pop()
    broken = directory / "broken.speedscope.json"
    broken.write_text(json.dumps(doc))
    out["broken"] = broken
    # 10 function names of 64 KiB (the longest a string may be) over a 300-deep chain
    long = directory / "long-names.speedscope.json"
    long.write_bytes(export(input_from_bytes(long_names(10, 64 * 1024, 300)), "speedscope"))
    out["long-names"] = long
    return out


@pytest.fixture(scope="module")
def pages(files):
    return dict(zip(files, speedscope.open_files(list(files.values())), strict=True))


@pytest.mark.parametrize("name", VIEWER_SAMPLES)
def test_export_is_valid_against_speedscopes_schema(files, name):
    assert speedscope.schema_errors(json.loads(files[name].read_text())) == []


def test_schema_check_can_fail(files):
    doc = json.loads(files["cafe-tv-full"].read_text())
    del doc["$schema"]
    doc["profiles"][1]["unit"] = "furlongs"
    errors = speedscope.schema_errors(doc)
    assert any("$schema" in e for e in errors)
    assert any("furlongs" in e for e in errors)


@pytest.mark.parametrize("name", VIEWER_SAMPLES)
def test_speedscope_imports_without_a_complaint(pages, name):
    page = pages[name]
    assert page.problems() == []
    assert page.importer == "Importing as speedscope json file"
    assert page.title.endswith(" - speedscope")


@pytest.mark.parametrize("name", VIEWER_SAMPLES)
def test_sandwich_shows_our_totals_for_every_thread(files, pages, name):
    doc = json.loads(files[name].read_text())
    units = {p["name"]: p["unit"] for p in doc["profiles"]}
    want = expected(name)
    shown = {p.name for p in pages[name].profiles}
    assert shown == set(units)
    for thread in sorted(want.threads()):
        for kind in ("wall", "cpu", "timeline"):
            assert f"{thread} — {kind}" in shown
        if want.by(lambda k, t=thread: k[0] == t, "alloc_bytes").get(True):
            assert f"{thread} — alloc bytes" in shown

    problems = []
    for profile in pages[name].profiles:
        thread, kind = profile.name.rsplit(" — ", 1)
        metric = KINDS[kind]
        table = speedscope.sandwich(profile, units[profile.name], key=lambda r: (r.name, r.file))
        mine = {k[1:]: f for k, f in want.functions.items() if k[0] == thread}
        for column, index in (("self", 1), ("total", 0)):
            got = {k: v[index][0] for k, v in table.items() if v[index][0]}
            printed = {k: v[index][1] for k, v in table.items()}
            ours = {k: getattr(f, column)[metric] for k, f in mine.items()}
            ours = {k: v for k, v in ours.items() if v}

            def tolerance(k, column=column, printed=printed, kind=kind, mine=mine):
                slack = printed.get(k, 0)
                if kind == "timeline":  # synthetic samples: one period per call path
                    slack += SAMPLE_PERIOD_US * getattr(mine[k], column)["paths"]
                return slack

            problems += [f"{profile.name} {column} {p}" for p in differences(got, ours, tolerance)]
    assert problems == []


def test_names_cut_where_drawn_still_load_and_name_their_functions(files, pages):
    """Names of 64 KiB are drawn cut to NAME_LIMIT characters (issue 27, row 8); speedscope
    imports the file cleanly and its Sandwich lists each frame under its cut name, the start of
    the whole name the file keeps once in wholeNames."""
    page = pages["long-names"]
    assert page.problems() == []
    assert page.importer == "Importing as speedscope json file"
    doc = json.loads(files["long-names"].read_text())
    whole = doc["wholeNames"]
    rows = [row for p in page.profiles if p.name.endswith(" — wall") for row in p.rows]
    cut = [row for row in rows if row.name.endswith("…")]
    assert len(cut) >= 10
    for row in cut:
        assert len(row.name) <= NAME_LIMIT
        assert any(name.startswith(row.name[:-1]) for name in whole)


def test_harness_reports_a_file_speedscope_refuses(pages):
    page = pages["broken"]
    assert not page.imported
    assert page.error_page
    assert any("to equal weights.length" in p for p in page.problems())


def test_figures_are_read_back_with_their_printed_precision():
    assert speedscope.figure("10.48s (14%)", "microseconds") == pytest.approx((10.48e6, 5e3))
    assert speedscope.figure("980.20ms (1.3%)", "microseconds") == pytest.approx((980200, 5))
    assert speedscope.figure("1:05 (3%)", "microseconds") == pytest.approx((65.5e6, 0.5e6))
    assert speedscope.figure("21,443,464 (49%)", "none") == (21443464, 0)
    assert speedscope.figure("1.29 MB (88%)", "bytes") == pytest.approx(
        (1.29 * 2**20, 0.005 * 2**20)
    )
    assert speedscope.figure("512 B (1%)", "bytes") == (512, 0.5)
