"""The gate's floors and the figures it judges (pure, light: the commands' option defaults
come from here without loading what judges them)."""

from __future__ import annotations

from dataclasses import dataclass

#: The figures judged, their words, and whether each is a counter (judged by size alone).
JUDGED: dict[str, tuple[str, bool]] = {
    "self_cpu": ("CPU operations", True),
    "self_wall": ("self wall time", False),
    "self_alloc_bytes": ("allocated bytes", False),
    "self_live_bytes": ("live bytes", False),
}


#: ``--fail-over``'s floor when the option is not given (the verdicts are said, not gated).
FAIL_OVER_DEFAULT = 10.0


@dataclass(frozen=True, slots=True)
class Rules:
    """The gate's floors. Percentages are of the baseline's median."""

    fail_over: float = FAIL_OVER_DEFAULT  # % change a clock or byte figure must exceed
    counter_over: float = 2.0  # % change a counter must exceed
    min_effect: float = 1.0  # the change in multiples of the noise (the larger IQR)
    alpha: float = 0.01  # a clock's p-value must be below this
    min_share: float = 1.0  # % of the run's total a function must hold to be judged

    @classmethod
    def from_options(
        cls,
        fail_over: float | None,
        counter_over: float,
        min_effect: float,
        alpha: float,
        min_share: float,
    ) -> Rules:
        """The rules the commands' options give (``--fail-over`` unset: its default floor)."""
        return cls(
            fail_over=FAIL_OVER_DEFAULT if fail_over is None else fail_over,
            counter_over=counter_over,
            min_effect=min_effect,
            alpha=alpha,
            min_share=min_share,
        )

    def floor(self, metric: str) -> float:
        return self.counter_over if JUDGED[metric][1] else self.fail_over

    def to_json(self) -> dict[str, float]:
        return {
            "fail_over_pct": self.fail_over,
            "counter_over_pct": self.counter_over,
            "min_effect_iqr": self.min_effect,
            "alpha": self.alpha,
            "min_share_pct": self.min_share,
        }


DEFAULT_RULES = Rules()
