"""Metric families and their Prometheus text exposition (format 0.0.4): no I/O, no asyncio."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass
class Family:
    """One metric: name, type (``counter``/``gauge``), help text and its labelled values (each
    sample's labels as a mapping, or as their exposition text: :func:`label_text`)."""

    name: str
    type: str
    help: str
    samples: list[tuple[dict[str, str] | str, float]] = field(default_factory=list)

    def add(self, value: float, **labels: object) -> Family:
        self.samples.append(({k: str(v) for k, v in labels.items()}, float(value)))
        return self

    def add_text(self, value: float, labels: str) -> Family:
        """A sample whose labels are already exposition text (:func:`label_text`): what a
        scrape of thousands of devices uses, each device's label escaped once."""
        self.samples.append((labels, value))
        return self


def label_text(**labels: object) -> str:
    """Labels as the exposition writes them: ``device="tv",state="refused"``."""
    return ",".join(f'{k}="{_escape(str(v))}"' for k, v in labels.items())


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    if type(value) is int:
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)


def render(families: Iterable[Family]) -> str:
    """The text exposition of ``families``."""
    lines = []
    for fam in families:
        lines.append(f"# HELP {fam.name} {fam.help.replace(chr(10), ' ')}")
        lines.append(f"# TYPE {fam.name} {fam.type}")
        for labels, value in fam.samples:
            text = labels if isinstance(labels, str) else label_text(**labels)
            lines.append(
                f"{fam.name}{{{text}}} {_number(value)}" if text else f"{fam.name} {_number(value)}"
            )
    return "\n".join(lines) + "\n"
