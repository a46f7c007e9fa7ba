"""The README is a front page, and every link in it and in docs/ leads somewhere.

The README: at most 15,000 bytes; its first lines say what rokuprof is; exactly two set-up
commands, each a fenced block of its own with what it costs beside it, made of the steps CI
(`.ci/run`) runs; a screenshot that exists; a link to each docs/ page a newcomer needs. Every
relative link of README.md and docs/*.md names a file that exists and, with `#anchor`, a heading
of that file (GitHub's anchors).
"""

from __future__ import annotations

import re
import shlex
import struct
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^(```|~~~)")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
CODE_SPAN = re.compile(r"`+[^`]*`+")


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks."""
    out, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if not fenced:
            out.append(line)
    return out


def fenced_blocks(text: str) -> list[tuple[int, str, list[str]]]:
    """(line index of the opening fence, its info string, the block's lines)."""
    blocks, current, lines = [], None, text.splitlines()
    for i, line in enumerate(lines):
        if FENCE.match(line.strip()):
            if current is None:
                current = (i, line.strip()[3:].strip(), [])
            else:
                blocks.append(current)
                current = None
        elif current is not None:
            current[2].append(line)
    return blocks


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in prose_lines(path.read_text(encoding="utf-8")):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(path: Path) -> list[str]:
    found = []
    for line in prose_lines(path.read_text(encoding="utf-8")):
        found += LINK.findall(CODE_SPAN.sub("", line))
    return found


def relative(target: str) -> bool:
    return not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I)


def test_every_relative_link_names_a_file_and_a_heading_that_exist():
    broken = []
    checked = 0
    for page in PAGES:
        for target in links(page):
            if not relative(target):
                continue
            file_part, _, anchor = target.partition("#")
            dest = (page.parent / file_part).resolve() if file_part else page
            checked += 1
            if not dest.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert checked > 20, "the link reader found too few links to be reading them"
    assert not broken, "\n".join(broken)


def test_the_link_checker_sees_a_broken_link_and_a_broken_anchor(tmp_path):
    (tmp_path / "a.md").write_text(
        "# Top\n\n## The A/B page (`diff`)\n\n[ok](#the-ab-page-diff) [bad](#nowhere) "
        "[gone](b.md) `[code](c.md)`\n\n```\n# not a heading\n[x](d.md)\n```\n"
    )
    assert anchors(tmp_path / "a.md") == {"top", "the-ab-page-diff"}
    assert links(tmp_path / "a.md") == ["#the-ab-page-diff", "#nowhere", "b.md"]


def test_readme_is_a_front_page_of_at_most_15000_bytes():
    assert len(README.read_bytes()) <= 15_000


def test_readme_says_what_rokuprof_is_in_its_first_lines():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "# rokuprof"
    opening = []
    for line in lines[1:]:
        if line.startswith(("#", "```", "![")):
            break
        opening.append(line)
    first = " ".join(opening).strip()
    assert first, "the README must open with prose, before any command or heading"
    assert len(lines[: len(opening) + 1]) <= 12
    for word in ("Roku", "BrightScript", "profil", "time", "memory"):
        assert word in first, f"the opening paragraph does not say {word!r}"


def steps(command: str) -> list[str]:
    return [" ".join(shlex.split(part)) for part in command.split("&&")]


def ci_steps() -> set[str]:
    """Each command line of .ci/run, as a user types it (`python -m pip` is `pip`, no --quiet)."""
    out = set()
    for line in (ROOT / ".ci" / "run").read_text().splitlines():
        line = line.split(" #")[0].strip()
        if not line or line.startswith("#"):
            continue
        for step in steps(line):
            words = [w for w in step.split() if w != "--quiet"]
            if words[:3] == ["python", "-m", "pip"]:
                words = ["pip", *words[3:]]
            out.add(" ".join(words))
    return out


def setup_blocks() -> list[tuple[int, list[str]]]:
    text = README.read_text(encoding="utf-8")
    return [
        (i, body)
        for i, _, body in fenced_blocks(text)
        if any("pip install" in line and "venv" in line for line in body)
    ]


def test_readme_has_exactly_two_setup_commands_made_of_cis_steps():
    blocks = setup_blocks()
    assert len(blocks) == 2, "one fenced block per set-up command, and only two"
    commands = []
    for _, body in blocks:
        lines = [line for line in body if line.strip()]
        assert len(lines) == 1, f"a set-up block holds one command: {lines}"
        commands.append(lines[0])
    demo, tests = (steps(c) for c in commands)
    assert demo[-1] == "rokuprof demo"
    assert tests[-1] == "python -m pytest"
    ci = ci_steps()
    # The test command is what CI runs, step for step (its install without --quiet).
    assert all(step in ci for step in tests), (tests, sorted(ci))
    # The demo command makes the same environment; it installs the package itself.
    assert demo[:2] == tests[:2]
    assert demo[2] == "pip install ."
    # Each block says what it costs in the prose that follows it.
    text_lines = README.read_text(encoding="utf-8").splitlines()
    for start, body in blocks:
        prose = []
        for line in text_lines[start + len(body) + 2 :]:
            if line.startswith(("```", "#")):
                break
            prose.append(line)
        prose = " ".join(prose)
        assert re.search(r"[Cc]ost:.*about \d+(-\d+)? (s|minutes)\b", prose), prose[:200]


def test_readme_shows_a_screenshot_that_exists():
    images = [t for t in links(README) if relative(t) and t.lower().endswith(".png")]
    assert images, "the README shows no screenshot"
    data = (ROOT / images[0]).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width >= 800 and height >= 400


@pytest.mark.parametrize(
    "page",
    ["commands.md", "daemon.md", "report.md", "formats.md", "simulator.md", "architecture.md"],
)
def test_readme_links_into_each_docs_page(page):
    targets = {t.partition("#")[0] for t in links(README)}
    assert f"docs/{page}" in targets
