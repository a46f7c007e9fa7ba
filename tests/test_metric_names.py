"""The daemon's one table of metrics (:mod:`rokuprof.daemon.metric_names`) and the page that
documents them: a metric added to one and not the other fails here."""

from __future__ import annotations

import re
from pathlib import Path

from rokuprof.daemon.metric_names import HELP, singles

DOCS = Path(__file__).resolve().parents[1] / "docs" / "daemon.md"


def test_docs_list_exactly_the_metrics_the_daemon_declares() -> None:
    documented = set(re.findall(r"\brokuprof_[a-z_]+", DOCS.read_text("utf-8")))
    assert sorted(documented - set(HELP)) == []  # documented, never served
    assert sorted(set(HELP) - documented) == []  # served, never documented


def test_each_metric_has_one_line_of_help_in_the_order_given() -> None:
    families = singles(dict.fromkeys(HELP, 0))
    assert [f.name for f in families] == list(HELP)
    assert all(f.help.strip() and "\n" not in f.help for f in families)
