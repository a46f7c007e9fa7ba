"""The synthetic app answers remote keys with work a profile shows, deterministically."""

from __future__ import annotations

from rokuprof.bsprof.encoder import encode_entries
from rokuprof.bsprof.grammar import END_MARKER, build_footer, build_header
from rokuprof.bsprof.model import STRING, Footer
from rokuprof.profile import ProfileReader
from rokuprof.simulator.app import MAX_PENDING_KEYS, AppConfig, SyntheticApp
from rokuprof.simulator.app_keys import DEEP_LINK, DETAILS_SCREEN, HOME_SCREEN

KEYS = [(1.0, "Down"), (1.5, "Down"), (2.0, "Select"), (3.0, "Back"), (3.2, "Lit_a")]


def run(keys: list[tuple[float, str]], config: AppConfig | None = None) -> list[tuple]:
    app = SyntheticApp(config or AppConfig(seed=4))
    for at, key in keys:
        assert app.press(key, at)
    entries: list[tuple] = []
    for _ in range(16):
        entries += app.advance(0.375)
    return entries + app.finish()


def stacks(entries: list[tuple]) -> set[tuple[str, ...]]:
    """Every call path as function names from the root, of a profile of ``entries``."""
    app = SyntheticApp(AppConfig(seed=4))
    data = b"".join(
        [
            build_header(app.header(1_700_000_000_000)),
            encode_entries(entries, True),
            END_MARKER,
            build_footer(Footer(1_700_000_006_000)),
        ]
    )
    tables = ProfileReader.from_bytes(data).tables
    return {
        tuple(tables.string(node.function_id) for node in reversed(tables.stack(pid)))
        for pid in tables.paths
    }


def test_same_keys_at_the_same_app_times_give_the_same_entries() -> None:
    keyed = run(KEYS)
    assert keyed == run(KEYS)
    assert keyed != run([(t + 0.01, k) for t, k in KEYS])
    assert keyed != run([])


def test_keys_do_the_work_of_their_screen() -> None:
    paths = stacks(run(KEYS))
    on_key = ("Main", "eventLoop", "handleMessage", "onKeyEvent")
    assert (*on_key, "moveFocus") in paths
    assert ("HomeScene_onRender", "RowList_update", "RowList_scroll") in paths
    assert (*on_key, "navigate", "DétailsÉcran_show") in paths
    assert ("ContentLoader_run", "loadDetails", "parseJSON", "parseValue", "parseObject") in paths
    assert (*on_key, "navigate", "showHome") in paths
    assert (*on_key, "SearchBox_onText") in paths
    quiet = stacks(run([]))
    key_only = {"moveFocus", "RowList_scroll", "loadDetails", "SearchBox_onText", "onInputEvent"}
    assert not {name for path in quiet for name in path} & key_only


def test_the_screen_follows_select_and_back() -> None:
    app = SyntheticApp(AppConfig(seed=1))
    app.press("Back", 0.1)  # on the home screen: nothing to go back to
    app.press("Select", 0.2)
    app.advance(0.25)
    assert app.screen == DETAILS_SCREEN
    app.press("Back", 0.3)
    app.advance(0.1)
    assert app.screen == HOME_SCREEN
    app.press(DEEP_LINK, 0.4)  # launch parameters: the linked content opens
    app.advance(0.1)
    assert app.screen == DETAILS_SCREEN


def test_keys_not_yet_due_change_nothing_and_are_handled_at_exit() -> None:
    """The keys have their own random source: until a key is due the app draws exactly what
    it draws without keys; the keys still queued when it exits are handled then."""
    app, quiet = SyntheticApp(AppConfig(seed=4)), SyntheticApp(AppConfig(seed=4))
    app.press("Down", 100.0)
    for _ in range(16):
        assert app.advance(0.375) == quiet.advance(0.375)
    assert "moveFocus" in {e[2] for e in app.finish() if e[0] == STRING}
    assert "moveFocus" not in {e[2] for e in quiet.finish() if e[0] == STRING}


def test_the_key_queue_is_bounded() -> None:
    app = SyntheticApp(AppConfig(seed=1))
    assert all(app.press("Down", 50.0) for _ in range(MAX_PENDING_KEYS))
    assert not app.press("Down", 50.0)
