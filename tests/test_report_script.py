"""The report page's script is assembled in Python at render time from its ES modules
(rokuprof/export/report/assets/src/, entry main.js) by rokuprof/export/report/script.py: the
modules in ES evaluation order in one scope. What cannot share one scope is refused by name."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rokuprof.export.report.script import ScriptError, _read, assemble, page_script
from tests.viewers import REPO, need_command

SRC = REPO / "rokuprof" / "export" / "report" / "assets" / "src"
MAX_LINES = 600  # as for the Python modules (test_architecture)
MODULE_LINE = re.compile(r"^// module: (\S+)$", re.M)


def real_modules() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in SRC.glob("*.js")}


def order_of(script: str) -> list[str]:
    return MODULE_LINE.findall(script)


# ------------------------------------------------------------------ the real front end


def test_the_page_script_is_the_modules_in_evaluation_order_and_node_parses_it(tmp_path: Path):
    script = page_script()
    order = order_of(script)
    modules = real_modules()
    # every module but the types-only contract, each once, main.js last
    assert sorted(order) == sorted(set(modules) - {"contract.js"}) and order[-1] == "main.js"
    place = {name: i for i, name in enumerate(order)}
    for name in order:
        for used, _ in _read(name, modules[name]).imports:
            assert place[used] < place[name], f"{used} must run before {name}"
    assert not re.search(r"^\s*(import|export)\b", script, re.M)
    assert script.startswith('(() => {\n"use strict";') and script.endswith("})();\n")
    assert "</" not in script
    node = need_command("node", "apt-get install nodejs")
    (tmp_path / "page.js").write_text(script, encoding="utf-8")
    proc = subprocess.run(
        [node, "--check", str(tmp_path / "page.js")], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr


def test_the_front_end_is_small_modules_with_names_of_their_own() -> None:
    modules = real_modules()
    sizes = {name: len(text.splitlines()) for name, text in modules.items()}
    assert len(sizes) >= 6, sizes
    too_big = {name: n for name, n in sizes.items() if n > MAX_LINES}
    assert not too_big, f"front-end modules over {MAX_LINES} lines: {too_big}"
    owner: dict[str, str] = {}
    for name, text in sorted(modules.items()):
        for declared in _read(name, text).declared:
            assert declared not in owner, f"`{declared}` in both {owner[declared]} and {name}"
            owner[declared] = name
    # a sample of what the reader must see: destructured, comma-separated and function names
    assert {"parent", "nodeFn", "BU_TOP", "BU_SIDE", "shortPath", "state"} <= set(owner)


def test_the_pure_modules_import_only_pure_ones() -> None:
    modules = real_modules()
    pure = {"format.js", "colours.js", "decode.js", "diffrows.js", "bottomupindex.js"}
    for name in pure:
        assert {used for used, _ in _read(name, modules[name]).imports} <= pure, name
        assert not re.search(r"\b(document|window|localStorage)\.", modules[name]), name


# ------------------------------------------------------------------ generated module sets

NAMES = st.from_regex(r"[a-z][a-zA-Z0-9]{0,6}", fullmatch=True).filter(
    lambda s: s not in {"do", "if", "in", "for", "let", "new", "try", "var", "case", "else"}
)


@st.composite
def module_graphs(draw) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Acyclic modules m0 … mk (each imports only lower-numbered ones, in a drawn order, some
    side-effect only) and main.js importing a drawn selection; each declares its own names."""
    count = draw(st.integers(1, 7))
    graph: dict[str, list[str]] = {}
    modules: dict[str, str] = {}
    for i in range(count):
        deps = draw(st.lists(st.sampled_from(range(i)), unique=True) if i else st.just([]))
        graph[f"m{i}.js"] = [f"m{d}.js" for d in deps]
    graph["main.js"] = draw(st.permutations([f"m{i}.js" for i in range(count)]))[
        : draw(st.integers(1, count))
    ]
    for name, deps in graph.items():
        own = name[:-3].replace(".", "")
        lines = [f"// {name}"]
        for dep in deps:
            if draw(st.booleans()):
                lines.append(f'import {{ {dep[:-3]}v }} from "./{dep}";')
            else:
                lines.append(f'import "./{dep}";')
        lines += [
            f"const {own}v = 1, {own}w = {{ a: [1, 2] }};",
            f"function {own}f(x) {{ const inner = `${{x}}}}`; return inner; }}",
            f"export {{ {own}v, {own}f }};",
        ]
        modules[name] = "\n".join(lines) + "\n"
    return modules, graph


def evaluation_order(graph: dict[str, list[str]]) -> list[str]:
    """ES module evaluation order, written independently: post-order depth first from main.js."""
    seen: list[str] = []

    def walk(name: str) -> None:
        if name not in seen:
            seen.append(name)
            for dep in graph[name]:
                walk(dep)

    walk("main.js")
    done: list[str] = []

    def post(name: str) -> None:
        for dep in graph[name]:
            if dep not in done:
                post(dep)
        if name not in done:
            done.append(name)

    post("main.js")
    return done


@settings(max_examples=40, deadline=None)
@given(module_graphs())
def test_generated_modules_join_in_evaluation_order(case) -> None:
    modules, graph = case
    script = assemble(modules)
    order = order_of(script)
    assert order == evaluation_order(graph)
    sections = MODULE_LINE.split(script.removesuffix("})();\n"))[2::2]
    for name, section in zip(order, sections, strict=True):  # its own lines, in place
        own = [ln for ln in modules[name].splitlines() if not ln.startswith(("import", "export"))]
        assert [ln for ln in section.splitlines() if ln] == [ln for ln in own if ln]


DECLARATIONS = [
    "let {};",
    "function {}() {{}}",
    "const {{ a: {} }} = {{}};",
    "const zz = 1, {} = 2;",
    "class {} {{}}",
    "var [{}] = [];",
]


@settings(max_examples=25, deadline=None)
@given(module_graphs(), st.data())
def test_a_name_declared_in_two_modules_is_refused_naming_both(case, data) -> None:
    modules, _ = case
    order = order_of(assemble(modules))
    at = data.draw(
        st.lists(st.sampled_from(range(len(order))), min_size=2, max_size=2, unique=True)
    )
    first, second = (order[i] for i in sorted(at))
    name = data.draw(NAMES)
    modules[first] += f"const {name} = 0;\n"
    modules[second] += data.draw(st.sampled_from(DECLARATIONS)).format(name) + "\n"
    with pytest.raises(ScriptError, match=rf"`{name}` is declared in both {first} and {second}"):
        assemble(modules)


@settings(max_examples=25, deadline=None)
@given(module_graphs(), st.data())
def test_a_cycle_is_refused_naming_its_modules(case, data) -> None:
    modules, _ = case
    order = order_of(assemble(modules))
    back = data.draw(st.sampled_from(order[:-1]))  # every module is reached from main.js
    modules[back] = 'import "./main.js";\n' + modules[back]
    with pytest.raises(ScriptError, match=r"import cycle: main\.js → .*" + re.escape(back)):
        assemble(modules)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('import { a as b } from "./m0.js";', r"m1\.js line 1: `a as b`: an `as` alias"),
        ('import a from "./m0.js";', r"m1\.js line 1: only `import"),
        ('import * as a from "./m0.js";', r"m1\.js line 1: only `import"),
        ('import { a } from "lodash";', r"m1\.js line 1: only `import"),
        ('import { nothing } from "./m0.js";', r"m1\.js imports `nothing` from m0\.js"),
        ('import "./gone.js";', r"m1\.js imports \./gone\.js, which does not exist"),
        ("export default 1;", r"m1\.js line 1: only `export \{a, b\};`"),
        ('export { a } from "./m0.js";', r"m1\.js line 1: only `export \{a, b\};`"),
        ("export { m1v as other };", r"m1\.js line 1: `m1v as other`: an `as` alias"),
        ("export { ghost };", r"m1\.js exports `ghost`, which it does not declare"),
    ],
)
def test_what_cannot_share_one_scope_is_refused_by_name(line: str, message: str) -> None:
    modules = {
        "m0.js": "const m0v = 1, a = 2;\nexport { m0v, a };\n",
        "m1.js": line + "\nconst m1v = 1;\nexport { m1v };\n",
        "main.js": 'import "./m1.js";\n',
    }
    with pytest.raises(ScriptError, match=message):
        assemble(modules)


def test_a_name_declared_twice_in_one_module_is_refused() -> None:
    modules = {"main.js": "function f() {}\nconst g = 1,\n  f = 2;\n"}
    with pytest.raises(ScriptError, match=r"`f` is declared twice in main\.js"):
        assemble(modules)


def test_keywords_in_strings_comments_templates_and_nested_blocks_are_not_statements() -> None:
    modules = {
        "main.js": (
            'import { x } from "./a.js";\n'
            "const s = `\nimport nothing\n${x}\nexport { y };\n`;\n"
            "/*\nexport default 1;\nconst x = 2;\n*/\n"
            "const r = /[\"'`{]/g, q = \"import 'x'\";\n"
            "function f() {\n  const x = 3;\n  return x;\n}\n"
            "if (s) {\n  let r = 1;\n}\n"
            "export { f, r, q };\n"
        ),
        "a.js": "export const x = 1;\n",
    }
    script = assemble(modules)
    assert order_of(script) == ["a.js", "main.js"]
    assert "const x = 1;" in script and "import nothing" in script and "export { y };" in script


TEXT = st.text(st.sampled_from("ab {}()[]/*`'\"\\$;,=:\nimport export const"), max_size=30)


@st.composite
def noisy_modules(draw) -> tuple[str, list[str]]:
    """A module of top-level declarations whose strings, templates, comments and regular
    expressions hold brackets, quotes and keywords; and the names it declares, in order."""
    names = draw(st.lists(NAMES, min_size=1, max_size=8, unique=True))
    lines = []
    for name in names:
        text = draw(TEXT)
        escaped = text.replace("\\", "\\\\").replace("\n", "\\n")
        value = draw(
            st.sampled_from(
                [
                    json.dumps(text),  # a double-quoted string
                    "'" + escaped.replace("'", "\\'") + "'",
                    "`" + escaped.replace("`", "\\`").replace("$", "\\$") + "${1 + [2][0]}`",
                    "/" + re.sub(r"[^a-z ]", "", text).replace(" ", "x") + "[/({]/g",
                    "{ a: (x) => x / 2, b: [1, 2] }",
                ]
            )
        )
        lines.append(f"const {name} = {value};")
        if draw(st.booleans()):
            comment = text.replace("*/", "")
            lines.append(f"/* {comment} */" if draw(st.booleans()) else f"// {escaped}")
    return "\n".join(lines) + f"\nexport {{ {', '.join(names)} }};\n", names


@settings(max_examples=60, deadline=None)
@given(noisy_modules())
def test_brackets_quotes_and_keywords_inside_literals_and_comments_are_not_code(case) -> None:
    text, names = case
    module = _read("main.js", text)
    assert module.declared == names and module.exports == set(names)
    assert not module.imports
    assert assemble({"main.js": text}).count("// module:") == 1
