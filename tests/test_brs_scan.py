"""The simulator's reader of BrightScript (:mod:`rokuprof.simulator.brs_scan`) and the model it
builds (:mod:`rokuprof.simulator.app_from_source`), over generated sources: it never fails, it
finds exactly the definitions a source has at their lines (whatever strings and comments hold),
and every function of the model is one of them."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from rokuprof.simulator.app import AppConfig, SyntheticApp
from rokuprof.simulator.app_from_source import build_model
from rokuprof.simulator.brs_scan import scan_brs, scan_component

NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True).filter(
    lambda n: n.lower() not in {"sub", "function", "end", "if", "for", "while", "rem"}
)
#: Text that must never look like code: inside a string or a comment.
DECOYS = st.sampled_from(
    ["sub fake(", "end sub", "function x()", "' not a comment", "for i = 1", "end function"]
)


@st.composite
def statement(draw, names: list[str]) -> list[str]:
    kind = draw(st.sampled_from(["assign", "call", "string", "comment", "rem", "loop", "if"]))
    if kind == "assign":
        return [f"x = {draw(st.integers(0, 99))} + {{a: 1}}"]
    if kind == "call":
        return [f"{draw(st.sampled_from(names))}({draw(st.integers(0, 9))})"]
    if kind == "string":
        return [f'msg = "{draw(DECOYS)}" + "it\'s ""{draw(DECOYS)}"""']
    if kind == "comment":
        return [f"' {draw(DECOYS)}"]
    if kind == "rem":
        return [f"REM {draw(DECOYS)}"]
    if kind == "loop":
        return ["for i = 1 to 3", f"    {draw(st.sampled_from(names))}()", "end for"]
    return ['if key = "OK"', f"    {draw(st.sampled_from(names))}()", "end if"]


@st.composite
def sources(draw) -> tuple[str, list[tuple[str, int]]]:
    """A .brs text and the (name, line) of each definition in it."""
    names = draw(st.lists(NAMES, min_size=1, max_size=8, unique_by=str.lower))
    lines: list[str] = []
    defined: list[tuple[str, int]] = []
    for name in names:
        for _ in range(draw(st.integers(0, 2))):
            lines.append(draw(st.sampled_from(["", "' between", f'  x = "{name}("'])))
        keyword = draw(st.sampled_from(["sub", "function", "Sub", "FUNCTION", "public sub"]))
        defined.append((name, len(lines) + 1))
        lines.append(f"{keyword} {name}(a as Integer)")
        for _ in range(draw(st.integers(0, 6))):
            lines.extend("    " + s for s in draw(statement(names)))
        lines.append("end " + keyword.split()[-1])
    return "\n".join(lines) + "\n", defined


@settings(max_examples=150, deadline=None)
@given(sources())
def test_every_definition_is_found_at_its_line_and_nothing_else(case) -> None:
    text, defined = case
    found = scan_brs(text, "pkg:/source/main.brs")
    assert [(d.name, d.line) for d in found] == defined
    for definition in found:
        body = text.splitlines()[definition.line - 1 : definition.line - 1 + definition.lines]
        assert body[-1].lower().startswith("end ")
        assert all(1 < offset < definition.lines for offset, _ in definition.statements)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400), st.text(max_size=400))
def test_any_text_is_read_without_failing(brs: str, xml: str) -> None:
    scan_brs(brs, "pkg:/source/x.brs")
    scan_component(xml, "pkg:/components/x.xml")
    model = build_model("odd", {"pkg:/source/x.brs": brs, "pkg:/components/x.xml": xml})
    assert set(model.all_functions) >= {t.root for t in model.threads}


@settings(max_examples=60, deadline=None)
@given(sources(), st.sampled_from(["Select", "Down", "Back", "Lit_a", "Options"]))
def test_a_model_names_only_its_source_and_runs(case, key: str) -> None:
    """Component and source scopes from one generated text: each model function is a
    definition of the source at its line, and the app runs and takes keys with it."""
    text, defined = case
    xml = (
        '<component name="Home" extends="Scene">\n'
        '  <script type="text/brightscript" uri="pkg:/components/Home.brs" />\n</component>\n'
    )
    component = (
        text + "function onKeyEvent(key, press)\n    " + defined[0][0] + "()\nend function\n"
    )
    model = build_model(
        "gen",
        {
            "pkg:/source/main.brs": text,
            "pkg:/components/Home.xml": xml,
            "pkg:/components/Home.brs": component,
        },
    )
    lines = set(defined) | {("onKeyEvent", len(text.splitlines()) + 1)}
    for fn in model.all_functions.values():
        assert ((fn.shown or fn.name), fn.line) in lines
        assert fn.file in ("pkg:/source/main.brs", "pkg:/components/Home.brs")
    app = SyntheticApp(AppConfig(seed=3), model=model)
    app.advance(0.3)
    app.press(key, app.clock)
    assert app.advance(0.1) + app.finish()


def test_scopes_threads_and_the_component_xml() -> None:
    """Two components' ``init`` are two functions; a Task's functionName is its thread; an
    inline script's definitions are at their lines in the XML; ``onChange`` observers are
    roots of the render thread."""
    task_xml = (
        '<?xml version="1.0"?>\n<component name="Loader" extends="Task">\n'
        '<script type="text/brightscript"><![CDATA[\nsub init()\n    m.top.functionName = "go"\n'
        "end sub\nsub go()\n    fetch()\nend sub\nsub fetch()\nend sub\n"
        "]]></script>\n</component>\n"
    )
    scene_xml = (
        '<component name="Main Scene" extends="Scene"><interface>'
        '<field id="x" type="int" onChange="onX"/></interface>'
        '<script uri="Scene.brs"/></component>'
    )
    scene_brs = (
        'sub init()\n    t = CreateObject("roSGNode", "Loader")\nend sub\nsub onX()\nend sub\n'
    )
    model = build_model(
        "two",
        {
            "pkg:/components/Loader.xml": task_xml,
            "pkg:/components/Scene.xml": scene_xml,
            "pkg:/components/Scene.brs": scene_brs,
        },
    )
    assert {(k, f.shown or f.name, f.file, f.line) for k, f in model.functions.items()} == {
        ("Loader:init", "init", "pkg:/components/Loader.xml", 4),
        ("Loader:go", "go", "pkg:/components/Loader.xml", 7),
        ("Loader:fetch", "fetch", "pkg:/components/Loader.xml", 10),
        ("Main Scene:init", "init", "pkg:/components/Scene.brs", 1),
        ("Main Scene:onX", "onX", "pkg:/components/Scene.brs", 4),
    }
    threads = {t.name: t for t in model.threads}
    assert set(threads) == {"Main Scene", "Loader"} and model.notes == ()
    assert threads["Loader"].root == "Loader:go"
    assert {r for r, _ in threads["Main Scene"].roots} == {
        "Loader:init",
        "Main Scene:init",
        "Main Scene:onX",
    }


def test_no_entry_point_makes_every_function_a_root_and_says_so() -> None:
    model = build_model(
        "lib", {"pkg:/source/lib.brs": "sub a()\n    b()\nend sub\nsub b()\nend sub\n"}
    )
    [thread] = model.threads
    assert {r for r, _ in thread.roots} == {"a", "b"} and model.notes
    assert build_model("empty", {"pkg:/source/x.brs": "' nothing\n"}).threads == ()


def test_a_line_past_the_read_limit_is_cut() -> None:
    name = "f" + "x" * 100_000
    text = f"sub {name}()\n    {'y' * 1_000_000}(\nend sub\nsub {string.ascii_letters}()\nend sub\n"
    found = scan_brs(text, "pkg:/source/long.brs")
    assert [d.name for d in found] == [string.ascii_letters]  # the long definition is cut
