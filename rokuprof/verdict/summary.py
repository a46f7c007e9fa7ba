"""The verdicts for CI (pure): a Markdown summary (GitHub's ``$GITHUB_STEP_SUMMARY``) and JUnit
XML (one test case a judged function and figure, a failure a regression).

Names come from the device: they are data. In Markdown every character that could start markup
is escaped (a function named ``**x**`` or ``<img>`` shows as it is), in XML every name is
escaped and the characters XML 1.0 cannot hold (the C0 controls but tab, newline and carriage
return) are replaced by U+FFFD, so a hostile name never breaks either document.
"""

from __future__ import annotations

import math
import re

from rokuprof.bsprof.wall_unit import WALL_UNITS
from rokuprof.units import seconds
from rokuprof.verdict.judge import IMPROVED, REGRESSED, SAME, UNKNOWN, Judgement, gate_line
from rokuprof.verdict.rules import JUDGED, Rules
from rokuprof.verdict.series import Series

#: What could start markup anywhere in a line (emphasis, code, links, HTML, tables, entities)
_MARKDOWN = re.compile(r"([\\`*_{}\[\]<>|~&])")
#: What starts a block only at the head of a text: a heading, a list item, a rule, a setext
#: underline; and an ordered list's ``1.`` / ``1)`` (its punctuation is what is escaped)
_LEADING = re.compile(r"^([#+\-=])")
_ORDERED = re.compile(r"^(\d+)([.)])")
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")

ICONS = {REGRESSED: "❌", UNKNOWN: "❔", IMPROVED: "✅", SAME: "✔️", "passed": "✅"}


def md_text(text: str) -> str:
    """Device text as literal Markdown: controls (newlines too) shown as U+FFFD, markup escaped
    (what starts a block only at the text's head, so the words stay readable as written)."""
    escaped = _MARKDOWN.sub(r"\\\1", _CONTROL.sub("\ufffd", text))
    return _ORDERED.sub(r"\1\\\2", _LEADING.sub(r"\\\1", escaped, count=1), count=1)


def markdown(judgements: dict[str, Judgement], title: str = "rokuprof verdict") -> str:
    """A section per device model: the outcome, then each verdict that is not ``same`` (a
    table row each: function, figure, change, medians, p, verdict), then how many were the
    same."""
    lines = [f"## {md_text(title)}", ""]
    for model, j in judgements.items():
        heading = f"### {md_text(model or 'device')}: {ICONS[j.outcome]} {j.outcome}"
        lines += [heading, "", md_text(j.headline()), ""]
        shown = [v for v in j.verdicts if v.outcome != SAME]
        if shown:
            lines += [
                "| function | figure | change | B vs A (medians) | p | verdict |",
                "|---|---|---|---|---|---|",
            ]
            for v in shown:
                lines.append(
                    "| "
                    + " | ".join(
                        [
                            md_text(v.function),
                            JUDGED[v.metric][0],
                            v.change(),
                            md_text(v.figures()),
                            f"{v.p:.3g}",
                            f"{ICONS[v.outcome]} {v.outcome}",
                        ]
                    )
                    + " |"
                )
            lines.append("")
            lines += ["<details><summary>why</summary>", ""]
            lines += [f"- {md_text(v.line())}" for v in shown]
            lines += ["", "</details>", ""]
        same = len(j.of(SAME))
        if same:
            lines += [f"{same} judged figure(s) the same.", ""]
    return "\n".join(lines)


def spread_markdown(series: Series, title: str = "rokuprof series", top: int = 15) -> str:
    """A series without a baseline: per busy function (by median self wall), the median and
    interquartile range of its CPU operations and self wall across the runs."""
    unit = WALL_UNITS[series.wall_unit]
    lines = [
        f"## {md_text(title)}",
        "",
        f"{len(series.runs)} run(s): median (IQR) per function",
        "",
        "| function | CPU operations | self wall | file |",
        "|---|---|---|---|",
    ]
    for key, wall, cpu in series.busiest(top):
        lines.append(
            f"| {md_text(key[1])} | {cpu.median:,.0f} ({cpu.iqr:,.0f}) | "
            f"{md_text(seconds(wall.median / unit))} ({md_text(seconds(wall.iqr / unit))}) | "
            f"{md_text(key[2])} |"
        )
    return "\n".join(lines) + "\n"


def junit(judgements: dict[str, Judgement], suite: str = "rokuprof") -> str:
    """JUnit XML: a test suite per device model, a test case per verdict (``function: figure``);
    ``regressed`` is a failure, ``unknown`` a skipped case (not decided), the rest pass."""
    out = ['<?xml version="1.0" encoding="UTF-8"?>']
    total = sum(len(j.verdicts) for j in judgements.values())
    failures = sum(len(j.of(REGRESSED)) for j in judgements.values())
    skipped = sum(len(j.of(UNKNOWN)) for j in judgements.values())
    out.append(
        f'<testsuites name={_attr(suite)} tests="{total}" failures="{failures}" '
        f'skipped="{skipped}">'
    )
    for model, j in judgements.items():
        name = f"{suite}.{model or 'device'}"
        out.append(
            f'  <testsuite name={_attr(name)} tests="{len(j.verdicts)}" '
            f'failures="{len(j.of(REGRESSED))}" skipped="{len(j.of(UNKNOWN))}">'
        )
        for v in j.verdicts:
            case = f"{v.function}: {JUDGED[v.metric][0]}"
            head = f"    <testcase classname={_attr(v.key[2] or v.key[0])} name={_attr(case)}"
            if v.outcome == REGRESSED:
                out.append(head + ">")
                out.append(f"      <failure message={_attr(v.line())}>{_text(v.line())}</failure>")
                out.append("    </testcase>")
            elif v.outcome == UNKNOWN:
                out.append(head + ">")
                out.append(f"      <skipped message={_attr(v.line())}/>")
                out.append("    </testcase>")
            else:
                out.append(head + "/>")
        out.append("  </testsuite>")
    out.append("</testsuites>")
    return "\n".join(out) + "\n"


def _clean(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


_XML_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\n": "&#10;", "\r": "&#13;"}
_XML_SPECIAL = re.compile('[&<>"\n\r]')


def _attr(text: str) -> str:
    """A double-quoted attribute value (xml.sax.saxutils would load urllib, sockets and all)."""
    return '"' + _text(text) + '"'


def _text(text: str) -> str:
    return _XML_SPECIAL.sub(lambda m: _XML_ESCAPES[m.group()], _clean(text))


def fail_over_json(rules: Rules, judgements: dict[str, Judgement]) -> dict[str, object]:
    """``"fail_over"`` of ``diff --json``: the floors, and each function a regressed verdict
    names (once, in the verdicts' order)."""
    failed: dict[tuple[str, str, str], dict[str, str]] = {}
    for j in judgements.values():
        for v in j.of(REGRESSED):
            failed[v.key] = {"module": v.key[0], "function": v.key[1], "file": v.key[2]}
    return {
        "pct": rules.fail_over,
        "min_share_pct": rules.min_share,
        "failed": list(failed.values()),
    }


def page_verdict(judgements: dict[str, Judgement], rules: Rules) -> dict[str, object]:
    """The gate as the A/B page holds it: the floor, whether it passed, the gate's line (the
    one the command prints, :func:`~rokuprof.verdict.judge.gate_line`) and each regressed
    verdict as ``[function, file, change in percent]`` (``None``: new)."""
    regressed = [v for j in judgements.values() for v in j.of(REGRESSED)]
    return {
        "pct": rules.fail_over,
        "passed": not regressed,
        "text": gate_line(judgements, rules.fail_over),
        "failed": [
            [v.function, v.key[2], None if math.isinf(v.change_pct) else round(v.change_pct, 1)]
            for v in regressed
        ],
    }
