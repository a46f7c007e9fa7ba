"""What the runs of a series made, and what CI reads of them: the sessions of each device,
decoded once into a :class:`~rokuprof.verdict.series.Series`; the JSON, Markdown and JUnit
outputs of the verdicts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rokuprof.export.aggregate import AnyInput
from rokuprof.store.files import append_text, write_atomic
from rokuprof.store.layout import SessionDir
from rokuprof.verdict.judge import Judgement
from rokuprof.verdict.rules import Rules
from rokuprof.verdict.series import Run, Series, run_of
from rokuprof.verdict.summary import junit, markdown, spread_markdown
from rokuprof.workflows.series_load import LoadOne
from rokuprof.workflows.series_record import series_json

if TYPE_CHECKING:  # only named: the leak check and a run show text for a terminal
    from rokuprof.workflows.leak_check import LeakReport
    from rokuprof.workflows.profile_once import RunOutcome


@dataclass(frozen=True)
class CiOutputs:
    """What CI reads: the verdicts as JSON on stdout, a Markdown summary appended to a file,
    JUnit XML written to a file."""

    json: Callable[[object], None] | None = None  # prints the series' document
    summary: Path | None = None
    junit: Path | None = None


NO_CI = CiOutputs()


@dataclass
class DeviceRuns:
    """The sessions each device made, in order, and what is known of them."""

    sessions: dict[str, list[Path]] = field(default_factory=dict)
    statuses: list[str] = field(default_factory=list)
    models: dict[str, str] = field(default_factory=dict)  # host -> the header's model
    reports: list[Path] = field(default_factory=list)
    leaks: dict[Path, LeakReport] = field(default_factory=dict)  # runs with iterations
    first: tuple[AnyInput, str] | None = None  # the first run decoded, and its label
    _runs: dict[Path, Run] = field(default_factory=dict)

    def add(self, host: str, outcome: RunOutcome) -> None:
        """A run made on ``host``: its figures taken from the capture its report read (the
        series decodes it only when that could not be read)."""
        session = outcome.session
        self.sessions.setdefault(host, []).append(session)
        self.statuses.append(outcome.status)
        if outcome.report is not None:
            self.reports.append(outcome.report)
        if outcome.leaks is not None:
            self.leaks[session] = outcome.leaks
        if outcome.capture is not None:
            self._keep(host, session, outcome.capture, str(SessionDir(session).archive))

    def leaked(self) -> bool:
        """Whether a run's iterations found a leak."""
        return any(report.leaks for report in self.leaks.values())

    def all(self) -> list[Path]:
        return [p for paths in self.sessions.values() for p in paths]

    def series(self, load: LoadOne) -> Series:
        """The runs made so far, each decoded once."""
        for host, paths in self.sessions.items():
            for path in paths:
                if path not in self._runs:
                    self._keep(host, path, *load(str(path), True))
        return Series("this build", tuple(self._runs[p] for p in self.all()))

    def _keep(self, host: str, session: Path, inp: AnyInput, label: str) -> None:
        """A run's figures (and the first run's capture itself: a diff table's side)."""
        self._runs[session] = run_of(inp, label)
        if not self._runs.keys() - {session}:
            self.first = (inp, label)
        self.models.setdefault(host, self._runs[session].model)


def ci_outputs(
    ci: CiOutputs,
    rules: Rules,
    judged: Series,
    judgements: dict[str, Judgement] | None,
    series_dir: Path | None,
    runs: DeviceRuns,
    warn: Callable[[str], None],
) -> None:
    if ci.json is not None:
        ci.json(series_json(judged, judgements, series_dir, runs.all(), rules, runs.leaks))
    found = judgements or {}
    if ci.summary is not None:
        text = markdown(found) if found else spread_markdown(judged)
        try:
            append_text(ci.summary, text + "\n")
        except OSError as error:
            warn(f"cannot write the summary {ci.summary}: {error.strerror or error}")
    if ci.junit is not None:
        try:
            write_atomic(ci.junit, junit(found).encode())
        except OSError as error:
            warn(f"cannot write {ci.junit}: {error.strerror or error}")
