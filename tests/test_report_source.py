"""``report --source`` (issue 22, item 4: "Which line?"): the hot functions' source in the page with
each line's CPU, wall time and allocations, and every ``file:line`` a link built from the editor
URL template. A planted capture (a feed parser whose line 8 is the hottest, called on two paths
and on a second thread; a function that allocates; one whose file is ``pkg:/../outside.brs`` and
one whose file is a link out of the source) with its source written here, a comment line of
which is hostile markup. In headless Chromium (the steps are tests/viewers/report_source.mjs):
the figures in the margin are the model's line figures (what the Lines tab adds up) and the
planted ones, the hottest line is marked, links use the template, the hostile line is text, no
console message or request, every interaction run to its layout, a screenshot in
``test-artifacts/report/source.png`` (docs/report-source.png is a copy). Then as a command:
a directory and a zip give the same excerpts, the same page twice, a bad ``--source`` or
template is one line with exit 2, and nothing outside the source is read."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections import Counter
from pathlib import Path
from urllib.parse import quote

import pytest
from report_helpers import START_MS, run_cli

from rokuprof.app.source import open_source
from rokuprof.bsprof.encoder import encode_entries
from rokuprof.bsprof.grammar import END_MARKER, build_footer, build_header
from rokuprof.bsprof.model import ALLOC, CALLS, CPU, MEMORY, MODULE, PATH, STRING, Footer
from rokuprof.export import input_from_bytes
from rokuprof.export.report import source
from rokuprof.export.report.model import build_model
from rokuprof.export.report.page import render_html
from rokuprof.export.report.session import report_page
from rokuprof.export.report.source import (
    MAX_FILE_BYTES,
    SourceText,
    editor_url_problem,
    pkg_relative,
    source_entry,
)
from rokuprof.simulator.app import AppConfig, SyntheticApp
from tests.viewers import REPO, VIEWERS
from tests.viewers.report import model, open_reports, problems

ARTIFACTS = REPO / "test-artifacts" / "report"
STEPS = VIEWERS / "report_source.mjs"
MAIN_BRS, FEED = "pkg:/source/main.brs", "pkg:/source/feed.brs"
OUTSIDE, LINKED = "pkg:/../outside.brs", "pkg:/source/linked.brs"
CRAFTED = "pkg:/source/javascript:alert(1)//x.brs"  # does not map: its link keeps the pkg path
MAIN, TASK = "MainThread", "TaskThread"
TEMPLATE = "idea://open?file={path}&line={line}"
SECRET = "OUTSIDE-THE-SOURCE"
HOSTILE_LINE = "' </script><script>document.title='pwned'</script><img src=x onerror=\"alert(1)\">"
FEED_LINES = [
    "' feed.brs: the Source tab's planted source",
    HOSTILE_LINE,
    "",
    "",
    "function parseFeed(text as String) as Object",  # 5
    "    items = []",
    "    json = ParseJSON(text)",
    "    for each entry in json.items",  # 8: the hottest line
    "        items.push({ title: entry.title })",  # 9: allocates
    "    end for",
    "    return items",
    "end function",  # 12
    "",
    "sub renderItem(item as Object)",  # 14
    '    label = CreateObject("roSGNode", "Label")',  # 15: allocates
    '    label.text = item.title + " &amp; <b>more</b>"',
    "end sub",
    "",
    "sub taskMain()",  # 19
    "    while true",
    '        parseFeed("{}")',
    "    end while",
    "end sub",
    "",
    "' nothing below is any function's",
]
MAIN_LINES = [
    "' main.brs",
    "sub main()",
    '    feed = parseFeed(ReadAsciiFile("pkg:/feed.json"))',
    "    for each item in feed",
    "        renderItem(item)",
    "    end for",
    "end sub",
]
#: path id -> (caller, function, file, function line, thread of a root, call-site offset)
PATHS = {
    1: (0, "main", MAIN_BRS, 2, MAIN, 0),
    2: (1, "parseFeed", FEED, 5, None, 2),
    3: (1, "renderItem", FEED, 14, None, 4),
    4: (3, "parseFeed", FEED, 5, None, 3),
    5: (0, "taskMain", FEED, 19, TASK, 0),
    6: (5, "parseFeed", FEED, 5, None, 3),
    7: (1, "escape", OUTSIDE, 1, None, 1),
    8: (1, "linked", LINKED, 1, None, 1),
    9: (1, "crafted", CRAFTED, 1, None, 1),
}
#: per repetition: (path, line offset, cpu, wall in µs)
CPU_ENTRIES = [
    (1, 4, 5, 10),
    (2, 2, 30, 40),
    (2, 4, 500, 900),
    (2, 5, 200, 300),
    (2, 7, 10, 20),
    (4, 4, 100, 150),
    (4, 3, 50, 60),
    (3, 2, 80, 100),
    (3, 3, 40, 90),
    (6, 4, 70, 80),
    (5, 3, 20, 30),
    (7, 1, 60, 70),
    (8, 1, 55, 65),
    (9, 1, 45, 50),
]
ALLOCS = [(2, 5, 48), (3, 2, 128)]  # (path, line offset, bytes) per repetition
REPS = 200
WALL_SCALE = 10  # the timeline needs a run of a few seconds
URI_SAFE = "/!~*'()"  # what encodeURIComponent leaves as it is, besides letters, digits and -_.


def planted() -> bytes:
    header = SyntheticApp(AppConfig(seed=3, name="Source", line_data=True, memory_ops=True)).header(
        START_MS
    )
    names = sorted({p[1] for p in PATHS.values()} | {p[2] for p in PATHS.values()} | {MAIN, TASK})
    sid = {name: i + 1 for i, name in enumerate(names)}
    entries: list = [(STRING, i, name) for name, i in sid.items()]
    entries += [(MODULE, 1, sid[MAIN]), (MODULE, 2, sid[TASK])]
    for pid, (caller, function, file, line, thread, offset) in PATHS.items():
        module = (1 if thread == MAIN else 2) if caller == 0 else 0
        entries.append((PATH, pid, caller, module, offset, sid[file], line, sid[function]))
    address = 0x1000
    for _ in range(REPS):
        entries += [(CPU, p, o, c, w * WALL_SCALE) for p, o, c, w in CPU_ENTRIES]
        for p, o, size in ALLOCS:
            entries.append((MEMORY, p, ALLOC, o, address, size))
            address += size
    entries += [(CALLS, pid, REPS) for pid in PATHS]
    busy_ms = REPS * sum(w for *_, w in CPU_ENTRIES) * WALL_SCALE // 1000
    body = build_header(header) + encode_entries(entries, True) + END_MARKER
    return body + build_footer(Footer(START_MS + busy_ms + 500))


def write_app(root: Path) -> Path:
    """The planted app's source under ``root/app``; ``root/outside.brs`` beside it (the secret
    that must not be read), and ``app/source/linked.brs`` a link to it."""
    app = root / "app"
    (app / "source").mkdir(parents=True)
    (app / "manifest").write_text("title=Source\nmajor_version=1\n")
    (app / "source" / "feed.brs").write_text("\n".join(FEED_LINES) + "\n")
    (app / "source" / "main.brs").write_text("\n".join(MAIN_LINES) + "\n")
    (root / "outside.brs").write_text(f"' {SECRET}\nsub escape()\nend sub\n")
    (app / "source" / "linked.brs").symlink_to(root / "outside.brs")
    return app


def line_figures(data: dict) -> dict[tuple[str, str], dict[int, dict[str, int]]]:
    """Per (thread, function), per line: the model's line figures added up (what the Lines tab
    shows for the whole run): cpu, wall, allocBytes, allocCount."""
    s, fns = data["strings"], data["functions"]
    threads = [s[n] for _, n in data["threads"]]
    node_fn, path_node = data["nodes"]["fn"], data["paths"]["node"]
    out: dict = {}
    for flat, keys in (
        (data["lines"], ("cpu", "wall")),
        (data["allocLines"], ("allocCount", "allocBytes")),
    ):
        for i in range(0, len(flat), 4):
            f = node_fn[path_node[flat[i]]]
            key = (threads[fns["thread"][f]], s[fns["name"][f]])
            row = out.setdefault(key, {}).setdefault(flat[i + 1], Counter())
            row[keys[0]] += flat[i + 2]
            row[keys[1]] += flat[i + 3]
    return out


def fn_keys(data: dict) -> list[tuple[str, str]]:
    s, fns = data["strings"], data["functions"]
    threads = [s[n] for _, n in data["threads"]]
    return [(threads[t], s[n]) for t, n in zip(fns["thread"], fns["name"], strict=True)]


def href(path: str, line: int) -> str:
    """The link the page builds: the path as encodeURIComponent leaves it, '/' kept."""
    return f"idea://open?file={quote(path, safe=URI_SAFE)}&line={line}"


#: Templates rokuprof refuses, written into a model by hand: the page makes no link of them.
REFUSED = ["JaVaScript:alert(document.domain)//{path}", "data:text/html,{path}", "{path}:{line}"]


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    directory = tmp_path_factory.mktemp("source")
    app = write_app(directory)
    inp = input_from_bytes(planted())
    path = directory / "source.html"
    path.write_bytes(report_page(inp, source=open_source(app), editor_url=TEMPLATE))
    refused = []
    for i, template in enumerate(REFUSED):
        data = model(path.read_text())
        data["source"]["editor"] = template
        refused.append(directory / f"refused-{i}.html")
        refused[-1].write_text(render_html(data))
    result, *others = open_reports([path, *refused], steps=STEPS, shots=ARTIFACTS)
    return result, model(path.read_text()), app.resolve(), others


def test_page_loads_cleanly_and_every_interaction_runs(page):
    result, *_ = page
    assert problems(result) == []
    assert len(result["requests"]) == 1 and result["scripts"] == 2
    assert {"tab", "range", "thread", "fromLines"} <= set(result["ms"])
    # each ran to the end of its layout (timed in the page; how fast is benchmarks/report.py's
    # figure, not a bound on a shared machine's clock)
    assert all(ms >= 0 for ms in result["ms"].values()), result["ms"]
    shot = ARTIFACTS / "source.png"
    assert shot.stat().st_size > 10_000 and shot.read_bytes()[:4] == b"\x89PNG"


def rows_of(result: dict, keys: list, key: tuple) -> dict[int, dict]:
    """The Source tab's rows of one function, by line, as the page showed them."""
    return {r["line"]: r for r in result["steps"]["each"][str(keys.index(key))]["rows"]}


def test_each_line_shows_the_line_figures(page):
    result, data, *_ = page
    keys = fn_keys(data)
    want = line_figures(data)
    seen = set()
    for fn, look in result["steps"]["each"].items():
        key = keys[int(fn)]
        rows = look["rows"]
        assert rows, key
        for r in rows:
            figs = want.get(key, {}).get(r["line"], {})
            assert r["cpu"] == figs.get("cpu"), (key, r)
            assert r["wall"] == figs.get("wall"), (key, r)
            assert r["allocBytes"] == figs.get("allocBytes")
            assert r["allocCount"] == figs.get("allocCount")
        seen.add(key)
    # every hot function whose file was read; not those whose file was not
    assert seen == {
        (MAIN, "parseFeed"),
        (MAIN, "renderItem"),
        (TASK, "parseFeed"),
        (TASK, "taskMain"),
        (MAIN, "main"),
    }

    # the planted figures themselves: parseFeed on the main thread, its two call paths added up
    rows = rows_of(result, keys, (MAIN, "parseFeed"))
    assert rows[8]["cpu"] == REPS * (500 + 100) and rows[8]["wall"] == REPS * 1050 * WALL_SCALE
    assert rows[7]["cpu"] == REPS * 50 and rows[6]["cpu"] == REPS * 30
    assert rows[9]["allocBytes"] == REPS * 48 and rows[9]["allocCount"] == REPS
    assert rows[8]["code"] == FEED_LINES[7] and rows[5]["code"] == FEED_LINES[4]
    # from 3 lines above the function to 3 below its end function (line 12)
    assert [r["line"] for r in rows.values()] == list(range(2, 16))
    task = rows_of(result, keys, (TASK, "parseFeed"))
    assert task[8]["cpu"] == REPS * 70 and task[6]["cpu"] is None


def test_line_figures_agree_with_diff_json(page, tmp_path):
    """CPU and wall per line as the Source tab shows them equal the per-line figures of
    ``rokuprof diff --json`` (the capture against itself: its B side), which reads the capture's
    call paths on its own, with no report model in between."""
    result, data, *_ = page
    capture = tmp_path / "planted.bsprof"
    capture.write_bytes(planted())
    args = ["diff", str(capture), str(capture), "--json", "--top", "0"]
    done = subprocess.run(
        [sys.executable, "-m", "rokuprof", *args],
        capture_output=True,
        timeout=120,
        check=True,
    )
    by_line = {
        (r["module"], r["function"], r["line"]): r["b"] for r in json.loads(done.stdout)["lines"]
    }
    keys = fn_keys(data)
    compared = 0
    for fn, look in result["steps"]["each"].items():
        thread, function = keys[int(fn)]
        for r in look["rows"]:
            want = by_line.get((thread, function, r["line"]))
            if want is None:  # a line without CPU figures (context, or allocations only)
                assert r["cpu"] is None or r["cpu"] == 0, (function, r)
                continue
            assert (r["cpu"], r["wall"]) == (want["cpu"], want["wall"]), (function, r, want)
            compared += 1
    assert compared >= 8


def test_the_hottest_lines_are_marked(page):
    result, data, *_ = page
    keys = fn_keys(data)
    rows = list(rows_of(result, keys, (MAIN, "parseFeed")).values())
    hot = {r["hot"]: r["line"] for r in rows if r["hot"]}
    assert hot == {1: 8, 2: 9, 3: 7}  # by CPU: 600, 200, 50 per repetition
    initial = result["steps"]["initial"]
    assert initial["fns"][0]["picked"] and keys[initial["fn"]] == (MAIN, "parseFeed")
    assert keys[initial["fns"][0]["fn"]] == (MAIN, "parseFeed")  # the most self CPU first


def test_links_use_the_editor_template(page):
    result, data, app, _ = page
    keys = fn_keys(data)
    feed = str(app / "source" / "feed.brs")
    rows = list(rows_of(result, keys, (MAIN, "parseFeed")).values())
    assert [r["href"] for r in rows] == [href(feed, r["line"]) for r in rows]
    links = result["steps"]["links"]
    for tab in ("tree", "functions", "bottomup", "lines", "source"):
        assert links[tab], tab
    every = [a for tab in links.values() for a in tab]
    assert all(a["href"].startswith("idea://open?file=") for a in every), every
    assert {a["href"] for a in every if a["text"] == f"{FEED}:5"} == {href(feed, 5)}
    # the crafted file name does not map into the app: its pkg path, percent-encoded
    crafted = {a["href"] for a in every if a["text"].startswith(CRAFTED)}
    assert crafted == {href(CRAFTED, 1)} and all("javascript:" not in h for h in crafted)
    cards = {keys[c["fn"]]: c for c in result["steps"]["lines"]}
    card = cards[(MAIN, "parseFeed")]
    assert card["button"] and {a["line"]: a["href"] for a in card["links"]}["8"] == href(feed, 8)


def test_a_function_opened_from_the_lines_tab_and_the_selection_followed(page):
    result, data, *_ = page
    keys = fn_keys(data)
    step = result["steps"]["fromLines"]
    assert step["tab"] == "source" and step["fn"] == step["wanted"]
    # a time range: the first half of the run, each path's figures apportioned
    rng = result["steps"]["range"]
    assert rng["range"][0] == 0 and rng["rows"]
    one = result["steps"]["oneThread"]
    assert {keys[f["fn"]][0] for f in one["fns"]} == {keys[one["fn"]][0]}


def test_hostile_source_stays_text_and_nothing_outside_is_read(page):
    result, data, *_ = page
    keys = fn_keys(data)
    rows = list(rows_of(result, keys, (MAIN, "parseFeed")).values())
    assert {r["line"]: r["code"] for r in rows}[2] == HOSTILE_LINE
    assert result["steps"]["elements"] == 0 and result["dialogs"] == []
    assert result["title"] != "pwned" and "pwned" not in result.get("title", "")
    text = json.dumps(data)
    assert SECRET not in text
    notes = " ".join(result["steps"]["initial"]["notes"])
    assert f"not a pkg:/ path inside the app: not read: {OUTSIDE}" in notes
    assert "a link out of the source directory: not read" in notes and LINKED in notes


def test_a_template_rokuprof_refuses_makes_no_link_in_the_page(page):
    *_, others = page
    for template, result in zip(REFUSED, others, strict=True):
        assert problems(result) == [], template
        links = [a for tab in result["steps"]["links"].values() for a in tab]
        assert links == [], template
        assert result["steps"]["lineCells"][:3] == ["2", "3", "4"]  # the lines, as text


@pytest.mark.parametrize(
    ("file", "rel"),
    [
        ("pkg:/source/main.brs", "source/main.brs"),
        ("pkg:/components/DétailsÉcran.brs", "components/DétailsÉcran.brs"),
        ("pkg:/../outside.brs", None),
        ("pkg:/source/../../etc/passwd", None),
        ("pkg://etc/passwd", None),
        ("pkg:/source//main.brs", None),
        ("pkg:/./main.brs", None),
        ("pkg:/source\\..\\main.brs", None),
        ("pkg:/source/main.brs\0", None),
        ("pkg:/", None),
        ("/etc/passwd", None),
        ("tmp:/cache.brs", None),
        ("source/main.brs", None),
    ],
)
def test_only_a_pkg_path_inside_the_app_maps(file, rel):
    assert pkg_relative(file) == rel


@pytest.mark.parametrize(
    ("template", "refused"),
    [
        ("vscode://file/{path}:{line}", False),
        ("idea://open?file={path}&line={line}", False),
        ("subl://open?url=file://{path}&line={line}", False),
        ("file://{path}", False),
        ("javascript:alert(1)//{path}", True),
        (" javascript:alert(1)", True),
        ("VBScript:msgbox", True),
        ("data:text/html,<script>alert(1)</script>", True),
        ("{path}:{line}", True),
        ("vscode://file/{path}:{line}\n", True),
        ("vscode://file/{path}:{col}", True),
    ],
)
def test_an_editor_template_starts_with_a_harmless_scheme(template, refused):
    assert (editor_url_problem(template) is not None) == refused


# ---------------------------------------------------------------- the command


@pytest.fixture
def planted_files(tmp_path: Path) -> tuple[Path, Path]:
    capture = tmp_path / "planted.bsprof"
    capture.write_bytes(planted())
    return capture, write_app(tmp_path)


def report(capture: Path, out: Path, *args: str) -> dict:
    proc = run_cli(str(capture), "-o", str(out), *args)
    assert proc.returncode == 0, proc.stderr
    return model(out.read_text())


def excerpts(data: dict) -> dict[str, list]:
    s = data["strings"]
    return {s[f[0]]: [f[1], f[2]] for f in data["source"]["files"]}


def test_report_source_with_a_directory_and_a_zip(planted_files, tmp_path):
    capture, app = planted_files
    from_dir = report(capture, tmp_path / "dir.html", "--source", str(app))
    src = from_dir["source"]
    assert src["label"] == "app" and src["editor"] == "vscode://file/{path}:{line}"
    files = excerpts(from_dir)
    note, chunks = files[FEED]
    assert note is None and chunks[0][0] == 2 and chunks[0][1][6] == FEED_LINES[7]
    s = from_dir["strings"]
    assert {s[i]: p for i, p in src["paths"]}[FEED] == str(app.resolve() / "source" / "feed.brs")

    archive = tmp_path / "app.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for name in ("manifest", "source/feed.brs", "source/main.brs"):
            z.write(app / name, name)
    from_zip = report(capture, tmp_path / "zip.html", "--source", str(archive))
    assert from_zip["source"]["label"] == "app.zip" and from_zip["source"]["paths"] == []
    zipped = excerpts(from_zip)
    assert zipped[FEED] == files[FEED] and zipped[MAIN_BRS] == files[MAIN_BRS]
    assert zipped[LINKED][0] == "not in the source"
    # the same page for the same inputs
    again = tmp_path / "zip2.html"
    report(capture, again, "--source", str(archive))
    assert again.read_bytes() == (tmp_path / "zip.html").read_bytes()
    report(capture, tmp_path / "dir2.html", "--source", str(app))
    assert (tmp_path / "dir2.html").read_bytes() == (tmp_path / "dir.html").read_bytes()


def test_a_bad_source_or_template_is_one_line_and_exit_2(planted_files, tmp_path):
    capture, app = planted_files
    out = tmp_path / "out.html"
    not_zip = tmp_path / "notes.txt"
    not_zip.write_text("not a zip")
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as z:
        z.writestr("../escape.brs", "x")
    cases = [
        (["--source", str(tmp_path / "nowhere")], "no such directory or file"),
        (["--source", str(not_zip)], "is not a directory or a readable .zip"),
        (["--source", str(evil)], "'..' in its path"),
        (["--source", str(app), "--editor-url", "javascript:alert(1)//{path}"], "refused"),
        (["--editor-url", "{path}:{line}"], "does not start with a scheme"),
        (["--editor-url", "vscode://file/{path}:{col}"], "unknown placeholder {col}"),
    ]
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0)
        cases.append((["--source", str(locked)], "cannot be read"))
    for args, says in cases:
        proc = run_cli(str(capture), "-o", str(out), *args)
        err = proc.stderr.decode()
        assert proc.returncode == 2, (args, err)
        assert err.count("\n") == 1 and err.startswith("error: ") and says in err, (args, err)
        assert not out.exists()


def test_nothing_outside_the_source_is_read(planted_files, tmp_path):
    capture, app = planted_files
    page_path = tmp_path / "out.html"
    data = report(capture, page_path, "--source", str(app))
    assert SECRET not in page_path.read_text()
    files = excerpts(data)
    assert files[OUTSIDE] == ["not a pkg:/ path inside the app: not read", []]
    assert files[LINKED] == ["a link out of the source directory: not read", []]
    assert files[CRAFTED][0] == "not a pkg:/ path inside the app: not read"


def test_a_long_file_is_cut_and_said_so(planted_files, tmp_path):
    capture, app = planted_files
    filler = "' " + "x" * 98 + "\n"
    with (app / "source" / "feed.brs").open("a") as f:
        f.write(filler * (MAX_FILE_BYTES // len(filler) + 10))
    data = report(capture, tmp_path / "out.html", "--source", str(app))
    note, chunks = excerpts(data)[FEED]
    assert note == "cut after 1.0 MiB: the rest was not read"
    assert chunks[0][1][6] == FEED_LINES[7]  # the functions at the top are shown all the same
    shutil.rmtree(app)


def test_a_fifo_in_the_source_is_not_waited_on(planted_files, tmp_path):
    capture, app = planted_files
    (app / "source" / "main.brs").unlink()
    os.mkfifo(app / "source" / "main.brs")
    data = report(capture, tmp_path / "out.html", "--source", str(app))
    assert excerpts(data)[MAIN_BRS] == ["cannot be read (not a regular file)", []]


def test_excerpts_are_bounded(monkeypatch):
    data = build_model(input_from_bytes(planted()))
    long_line = "    x = " + "y" * 1000
    text = "\n".join(FEED_LINES[:7] + [long_line] + ["    z = 1"] * 2000)  # no end function
    texts = {FEED: SourceText(text)}
    entry = source_entry(data, texts, label="app", editor_url=TEMPLATE, root=None)
    [(_, note, chunks)] = entry["files"]
    [(first, lines)] = chunks
    # without an end function, each function is 40 lines and 3 below (3 above): parseFeed's
    # (line 5), renderItem's (14) and taskMain's (19) merged, from line 2 to line 62
    assert note is None and first == 2 and len(lines) == 19 + 40 + 3 - 2 + 1
    assert lines[6] == long_line[: source.MAX_LINE_CHARS - 1] + "…"
    assert len(lines[6]) == source.MAX_LINE_CHARS
    monkeypatch.setattr(source, "MAX_PAGE_LINES", 10)
    entry = source_entry(data, texts, label="app", editor_url=TEMPLATE, root=None)
    [(_, _, [(first, lines)])] = entry["files"]
    assert first == 2 and len(lines) == 10
    notes = {r[4] for r in entry["fns"]}
    assert notes == {"not shown: page full"}  # each function's lines are whole or not shown
