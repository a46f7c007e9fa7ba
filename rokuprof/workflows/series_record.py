"""A series on disk and for CI: its directory (``OUT/series-<UTC>-<id>/``, the runs' sessions
inside it), its record ``series.json`` (the runs, per function the spread of each judged figure
across them, and the verdicts) and the same document for ``--json``."""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from rokuprof.store.files import make_dirs, write_atomic
from rokuprof.store.layout import SERIES_RECORD, series_name
from rokuprof.verdict.judge import Judgement
from rokuprof.verdict.rules import JUDGED, Rules
from rokuprof.verdict.series import Series, spread

if TYPE_CHECKING:  # only named: the leak check shows text for a terminal
    from rokuprof.workflows.leak_check import LeakReport

SERIES_FORMAT = 1


def new_series_dir(out: Path, now: float, token: str | None = None) -> Path:
    """A new, empty series directory under ``out``."""
    path = Path(out) / series_name(now, token or secrets.token_hex(4))
    make_dirs(path, exist_ok=False)
    return path


def series_json(
    judged: Series,
    judgements: dict[str, Judgement] | None,
    series_dir: Path | None,
    sessions: list[Path],
    rules: Rules | None = None,
    leaks: Mapping[Path, LeakReport] | None = None,
) -> dict[str, object]:
    """The series as data: its runs (session, model, length, and the leak verdicts of a run
    whose scenario repeats steps), per function the spread of each judged figure, and the
    verdicts per device model (``null`` without a baseline)."""
    leaks = leaks or {}
    functions = []
    for key in sorted(judged.functions()):
        module, function, file = key
        functions.append(
            {
                "module": module,
                "function": function,
                "file": file,
                **{m: spread(judged.values(key, m)).to_json() for m in JUDGED},
            }
        )
    functions.sort(key=lambda f: -f["self_wall"]["median"])  # type: ignore[index]
    return {
        "format": SERIES_FORMAT,
        "series": str(series_dir) if series_dir is not None else None,
        "wall_unit": judged.wall_unit,
        "runs": [
            {
                "session": str(path),
                "model": run.model,
                "seconds": round(run.seconds, 6),
                **({"leaks": leaks[path].to_json()} if path in leaks else {}),
            }
            for path, run in zip(sessions, judged.runs, strict=False)
        ],
        "rules": rules.to_json() if rules is not None else None,
        "outcome": _outcome(judgements),
        "verdicts": (
            {model: j.to_json() for model, j in judgements.items()} if judgements else None
        ),
        "functions": functions,
    }


def write_series_record(
    series_dir: Path,
    judged: Series,
    judgements: dict[str, Judgement] | None,
    rules: Rules,
    sessions: list[Path],
    leaks: Mapping[Path, LeakReport] | None = None,
) -> Path:
    """``series.json`` in the series directory, written atomically."""
    data = series_json(judged, judgements, series_dir, sessions, rules, leaks)
    return write_atomic(series_dir / SERIES_RECORD, json.dumps(data, indent=1) + "\n")


def _outcome(judgements: dict[str, Judgement] | None) -> str | None:
    if not judgements:
        return None
    outcomes = {j.outcome for j in judgements.values()}
    for outcome in ("regressed", "unknown"):
        if outcome in outcomes:
            return outcome
    return "passed"
