"""The diff page's data (``rokuprof diff --html``): two captures side by side, added to B's
report model as ``model["diff"]`` (the page draws B's flame graph, stack chart and timeline).

Every figure the page shows of A and B comes from here, made by the rules ``rokuprof diff
--json`` follows (:func:`~rokuprof.export.diff.compare`; per second of each run with
``per_second``, the same divisor): per function, source line and leak site, ``[A, B, Δ, Δ%]``
written as the JSON writes them (:func:`~rokuprof.export.diff_rows.plain_number`,
:func:`~rokuprof.export.diff_rows.growth_pct`); ``null`` where a side has none. The call tree
of both runs merged by call path (thread, then function and file from the root), so that a path
only A has is a row too: per node and metric its total and self figure in A and B, the total's
Δ and Δ%; and per node of B's model its node of that tree (``flame``), which colours B's frames
by how their total changed. What the first screen says comes from
:mod:`~rokuprof.export.diff_summary`, as the command says it: ``top`` (the top regressions and
improvements, rows of ``functions``), ``warning`` (two different apps) and ``verdict`` (the
gate's, set by the command). Strings are indexes into the model's ``strings``, as elsewhere.
Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePath

from rokuprof.export.diff import METRICS, Comparison, RunSide, per_second_factor
from rokuprof.export.diff_rows import LINE_METRICS, SITE_METRICS, RowDiff, growth, growth_pct
from rokuprof.export.diff_rows import plain_number as num
from rokuprof.export.diff_summary import apps_warning, top_changes
from rokuprof.export.model import ExportInput
from rokuprof.export.report.model import StringTable, build_model, capture_label
from rokuprof.export.report.page import render_html

#: The call tree's metrics: the report model's name and the call path's field.
TREE_METRICS = (
    ("wall", "wall"),
    ("cpu", "cpu"),
    ("calls", "calls"),
    ("allocBytes", "alloc_bytes"),
    ("liveBytes", "live_bytes"),
)
#: A change smaller than this, in percent, is drawn as no change.
SAME_WITHIN_PCT = 2.0


def _side(inp: ExportInput, side: RunSide, label: str) -> dict[str, object]:
    run = inp.run
    return {
        "input": label,
        "app": run.app,
        "appVersion": run.app_version,
        "capture": capture_label(run.start),
        "start": run.start,
        "seconds": round(side.seconds, 6),
        "timing": side.timing,
        "status": run.status,
        "problem": run.problem,
        "functions": side.functions,
    }


def _quad(before: float | None, after: float | None) -> list:
    """``[A, B, Δ, Δ%]`` as the JSON writes them (``None`` where a side is missing)."""
    x, y = before or 0, after or 0
    return [
        None if before is None else num(before),
        None if after is None else num(after),
        num(y - x),
        growth_pct(growth(x, y)),
    ]


def _row_quads(row: RowDiff, n: int) -> list[list]:
    return [
        _quad(None if row.a is None else row.a[i], None if row.b is None else row.b[i])
        for i in range(n)
    ]


def diff_model(
    model_b: dict, a: ExportInput, b: ExportInput, comparison: Comparison, labels: tuple[str, str]
) -> dict[str, object]:
    """``model["diff"]`` for B's report model (its ``strings`` grow by A's names)."""
    sid = StringTable(model_b["strings"]).id
    functions = []
    for d in comparison.functions:
        figures = [
            _quad(None if d.a is None else d.a.get(m), None if d.b is None else d.b.get(m))
            for m in METRICS
        ]
        functions.append([sid(d.module), sid(d.function), sid(d.file), d.status, figures])
    lines = []
    for r in comparison.lines:
        module, function, file, line = r.key
        quads = _row_quads(r, len(LINE_METRICS))
        lines.append([sid(module), sid(function), sid(file), line, r.status, quads])
    sites = []
    for r in comparison.leak_sites:
        module, chain = r.key
        path = [sid(x) for pair in chain for x in pair]
        sites.append([sid(module), path, r.status, _row_quads(r, len(SITE_METRICS))])
    tree, flame = merged_tree(model_b, a, b, comparison.per_second, sid)
    return {
        "warning": apps_warning(comparison.a, comparison.b),
        "top": top_rows(model_b, comparison),
        "label": f"{short_name(labels[0])} → {short_name(labels[1])}",  # a title, not paths
        "perSecond": comparison.per_second,
        "sameWithinPct": SAME_WITHIN_PCT,
        "sides": [_side(a, comparison.a, labels[0]), _side(b, comparison.b, labels[1])],
        "metrics": list(METRICS),
        "functions": functions,
        "lineMetrics": list(LINE_METRICS),
        "lines": lines,
        "siteMetrics": list(SITE_METRICS),
        "sites": sites,
        "tree": tree,
        "flame": flame,
    }


def top_rows(model_b: dict, comparison: Comparison) -> dict[str, list[list]]:
    """The first screen's lists (:func:`~rokuprof.export.diff_summary.top_changes`): per row
    ``[index into "functions", the figure it is ranked by, its line in B (0: unknown)]``."""
    strings, fns = model_b["strings"], model_b["functions"]
    thread_names = [strings[name] for _, name in model_b["threads"]]
    line_of = {
        (thread_names[t], strings[name], strings[file]): line
        for t, name, file, line in zip(
            fns["thread"], fns["name"], fns["file"], fns["line"], strict=True
        )
    }

    def rows(indexes: list[int]) -> list[list]:
        out = []
        for i in indexes:
            d = comparison.functions[i]
            out.append([i, d.ranked_by(comparison.sort), line_of.get(d.key, 0)])
        return out

    grew, shrank = top_changes(comparison)
    return {"regressions": rows(grew), "improvements": rows(shrank)}


def short_name(label: str) -> str:
    """A capture's short name for the title: its file or directory name, not its path."""
    return PurePath(label).name or label


def merged_tree(
    model_b: dict, a: ExportInput, b: ExportInput, per_second: bool, sid: Callable[[str], int]
) -> tuple[dict[str, object], list[int]]:
    """Both runs' call trees as one (see the module docstring), and per node of B's model its
    node in it. A node's self figure is the sum of the call paths that end there, its total that
    of the call paths through it; per second, each side's sums times its run's factor."""
    index: dict[tuple, int] = {}
    parents: list[int] = []
    keys: list[tuple[str, str, str]] = []  # (thread, function, file); a root: (thread, "", "")

    def node(parent: int, thread: str, function: str = "", file: str = "") -> int:
        key = (parent, thread if parent < 0 else "", function, file)
        found = index.get(key)
        if found is None:
            found = index[key] = len(parents)
            parents.append(parent)
            keys.append((thread, function, file))
        return found

    selves: list[dict[int, list[int]]] = []  # per side: per node its self figures
    present: list[set[int]] = []  # per side: the nodes on one of its call paths
    for inp in (a, b):
        own: dict[int, list[int]] = {}
        seen: set[int] = set()
        for p in inp.paths:
            if not p.frames:
                continue
            thread = inp.threads.get(p.thread, f"<module {p.thread}>")
            at = node(-1, thread)
            seen.add(at)
            for f in reversed(p.frames):
                frame = inp.frames[f]
                at = node(at, thread, frame.function, frame.file)
                seen.add(at)
            figures = own.setdefault(at, [0] * len(TREE_METRICS))
            for i, (_, field) in enumerate(TREE_METRICS):
                figures[i] += getattr(p, field)
        selves.append(own)
        present.append(seen)

    # B's model: each of its nodes in the merged tree (a parent comes before its children).
    strings, fns = model_b["strings"], model_b["functions"]
    thread_names = [strings[name] for _, name in model_b["threads"]]
    flame: list[int] = []
    for n, (parent, fn) in enumerate(
        zip(model_b["nodes"]["parent"], model_b["nodes"]["fn"], strict=True)
    ):
        if parent < 0:
            flame.append(node(-1, thread_names[n]))
        else:
            thread = thread_names[fns["thread"][fn]]
            name, file = strings[fns["name"][fn]], strings[fns["file"][fn]]
            flame.append(node(flame[parent], thread, name, file))
    present[1].update(flame)

    count = len(parents)
    factors = [per_second_factor(inp.run.duration) if per_second else 1 for inp in (a, b)]
    columns: dict[str, dict[str, list]] = {}
    for i, (metric, _) in enumerate(TREE_METRICS):
        side_self, side_total = [], []
        for s in (0, 1):
            own_i = [0] * count
            for at, figures in selves[s].items():
                own_i[at] = figures[i]
            total = own_i[:]
            for n in range(count - 1, -1, -1):  # children come after their parents
                if parents[n] >= 0:
                    total[parents[n]] += total[n]
            k, seen = factors[s], present[s]
            side_self.append([v * k if n in seen else None for n, v in enumerate(own_i)])
            side_total.append([v * k if n in seen else None for n, v in enumerate(total)])
        quads = [_quad(x, y) for x, y in zip(side_total[0], side_total[1], strict=True)]
        columns[metric] = {
            "a": [q[0] for q in quads],
            "b": [q[1] for q in quads],
            "d": [q[2] for q in quads],
            "p": [q[3] for q in quads],
            "selfA": [None if v is None else num(v) for v in side_self[0]],
            "selfB": [None if v is None else num(v) for v in side_self[1]],
        }
    tree = {
        "parent": parents,
        "thread": [sid(t) for t, _, _ in keys],
        "name": [sid(f) if f else -1 for _, f, _ in keys],
        "file": [sid(f) if f else -1 for _, _, f in keys],
        "figures": columns,
    }
    return tree, flame


def diff_page(
    a: ExportInput,
    b: ExportInput,
    comparison: Comparison,
    labels: tuple[str, str],
    verdict: dict | None = None,
    trace: dict | None = None,
    judgements: dict[str, dict] | None = None,
    series: tuple[dict | None, dict | None] | None = None,
) -> bytes:
    """The diff page: B's report page with ``model["diff"]`` (see the module docstring);
    ``verdict`` is the gate's result as the command decided it (``--fail-over``), shown first;
    ``judgements`` every verdict, per device model as
    :meth:`~rokuprof.verdict.judge.Judgement.to_json` writes it, shown next (``verdicts``);
    ``trace`` the two sessions' app-trace figures (their ``lines`` as the command says them,
    and which ``failed`` the gate), shown after it. With a series on a side, ``a`` or ``b`` is
    the run it is drawn from and ``series`` says, per side, which: ``{"input": the series,
    "run": the run, "index": its place from 1, "runs": how many}`` (``None``: one capture);
    the title then names the series."""
    model = build_model(b)
    model["diff"] = diff_model(model, a, b, comparison, labels)
    model["diff"]["verdict"] = verdict
    model["diff"]["trace"] = trace
    model["diff"]["verdicts"] = judgements
    model["diff"]["series"] = None if series is None else list(series)
    if series is not None:
        names = [labels[k] if side is None else side["input"] for k, side in enumerate(series)]
        model["diff"]["label"] = f"{short_name(names[0])} → {short_name(names[1])}"
    return render_html(model).encode()
