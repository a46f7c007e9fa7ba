"""What a diff says first (export/diff_summary): the gate's verdict in words, with each failed
function's change of time in the capture's seconds; the top regressions and improvements, taken
from the command's ranked rows in their order by the sign of the figure each is ranked by; and
the two-apps warning. The command prints the verdict and the warning, the A/B page shows them
(test_diff_verdict checks both at the user's level)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rokuprof.export.diff import SELF_METRICS, Comparison, Figures, FunctionDiff, RunSide
from rokuprof.export.diff_summary import apps_warning, top_changes


def side(app: str | None = "Café TV", wall_unit: str = "us") -> RunSide:
    return RunSide(app, "1.0", "complete", None, 20.0, "footer", wall_unit, Figures(), 0)


def comparison(functions, *, per_second=False, sort="change", wall_unit="us") -> Comparison:
    return Comparison(
        side(wall_unit=wall_unit), side(wall_unit=wall_unit), per_second, sort, functions
    )


def fn(name: str, a: float | None, b: float | None, lead: str = "self_wall") -> FunctionDiff:
    """A function with self wall ``a`` in A and ``b`` in B (``None``: not in that capture)."""
    fa = None if a is None else Figures(self_wall=a)
    fb = None if b is None else Figures(self_wall=b)
    return FunctionDiff(("HomeScene", name, f"pkg:/{name}.brs"), "changed", fa, fb, 0.5, lead)


def test_two_apps_are_warned_of_only_when_both_say_and_differ() -> None:
    assert apps_warning(side("Café TV"), side("Other App")) == (
        "warning: A and B are different apps (Café TV, Other App): their functions are "
        "compared by name only"
    )
    assert apps_warning(side("Café TV"), side("Café TV")) is None
    assert apps_warning(side(None), side("Other App")) is None


figure = st.none() | st.integers(0, 50)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(
        st.tuples(figure, figure, st.sampled_from(SELF_METRICS)).filter(
            lambda r: r[0] is not None or r[1] is not None
        ),
        max_size=30,
    ),
    sort=st.sampled_from(("change", "self_wall", "calls")),
    n=st.integers(0, 6),
)
def test_the_top_lists_are_the_first_ranked_rows_that_grew_and_that_shrank(rows, sort, n):
    functions = []
    for i, (a, b, lead) in enumerate(rows):
        fa = None if a is None else Figures(**{lead: a, "calls": a})
        fb = None if b is None else Figures(**{lead: b, "calls": b})
        functions.append(FunctionDiff(("m", f"f{i}", "pkg:/f.brs"), "changed", fa, fb, 0.1, lead))
    grew, shrank = top_changes(comparison(functions, sort=sort), n)

    def change(i: int) -> float:
        d = functions[i]
        return d.delta(d.lead if sort == "change" else sort)

    # in the ranked order, at most n each, and no row that grew or shrank is skipped before
    # the last one listed
    assert grew == sorted(grew) and shrank == sorted(shrank) and not set(grew) & set(shrank)
    assert grew == [i for i in range(len(functions)) if change(i) > 0][:n]
    assert shrank == [i for i in range(len(functions)) if change(i) < 0][:n]
