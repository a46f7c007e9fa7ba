"""The report page's script is built from its ES modules (rokuprof/export/report/assets/src/) by
the pinned esbuild into assets/report.js, which is committed (pip users have no Node): the
committed bundle must be what a fresh build writes, and the modules stay small and many."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.viewers import REPO, need_command, need_npm

REPORT = REPO / "rokuprof" / "export" / "report"
SRC = REPORT / "assets" / "src"
MAX_LINES = 600  # as for the Python modules (test_architecture)


def test_the_committed_bundle_is_a_fresh_build(tmp_path: Path) -> None:
    node = need_command("node", "apt-get install nodejs")
    need_npm("esbuild")
    built = tmp_path / "report.js"
    proc = subprocess.run(
        [node, str(REPORT / "build_report.mjs"), "--out", str(built)],
        cwd=tmp_path,  # the build names its modules from the repository, wherever it runs
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    committed = (REPORT / "assets" / "report.js").read_text(encoding="utf-8")
    assert built.read_text(encoding="utf-8") == committed, (
        "assets/report.js is not the build of assets/src/: run `npm run build:report`"
    )
    assert committed.startswith("// rokuprof report") and "GENERATED from" in committed[:400]


def test_the_front_end_is_small_modules() -> None:
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in SRC.glob("*.js")}
    assert len(sizes) >= 6, sizes
    too_big = {name: n for name, n in sizes.items() if n > MAX_LINES}
    assert not too_big, f"front-end modules over {MAX_LINES} lines: {too_big}"
    # each one module of the page, imported by the entry point (nothing left out of the build)
    main = (SRC / "main.js").read_text(encoding="utf-8")
    typedefs_only = {"contract.js", "main.js"}
    assert [n for n in sizes if n not in typedefs_only and f'"./{n}"' not in main] == []


IMPORT = re.compile(r'^import (?:\{[^}]*\} from )?"\./([\w-]+)\.js";$', re.M)


def test_modules_import_only_modules_that_run_before_them() -> None:
    """main.js imports every module in the order they run; each module imports only modules
    before it there (what runs later registers with actions.js), so there is no cycle and no
    module reads another that has not run. The pure ones import only pure ones."""
    order = IMPORT.findall((SRC / "main.js").read_text(encoding="utf-8"))
    assert len(order) == len(set(order)) and "contract" not in order
    place = {name: i for i, name in enumerate(order)}
    late = []
    for name in order:
        for used in IMPORT.findall((SRC / f"{name}.js").read_text(encoding="utf-8")):
            if place[used] >= place[name]:
                late.append(f"{name}.js imports {used}.js, which runs after it")
    assert late == []
    pure = {"format", "colours", "decode", "diffrows", "bottomupindex"}
    for name in pure:
        source = (SRC / f"{name}.js").read_text(encoding="utf-8")
        assert set(IMPORT.findall(source)) <= pure, name
        assert not re.search(r"\b(document|window|localStorage)\.", source), name
