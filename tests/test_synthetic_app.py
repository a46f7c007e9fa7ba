"""The simulator's synthetic app: deterministic, and realistic in the ways tests rely on."""

from rokuprof.bsprof.encoder import encode_entries
from rokuprof.bsprof.grammar import END_MARKER, build_footer, build_header
from rokuprof.bsprof.model import ALLOC, FREE, FREE_REALLOC, MEMORY, PATH, Footer
from rokuprof.profile import ProfileReader
from rokuprof.simulator.app import AppConfig, SyntheticApp


def run(config: AppConfig, seconds: float, step: float = 0.5) -> list[tuple]:
    app = SyntheticApp(config)
    entries = []
    for _ in range(round(seconds / step)):
        entries += app.advance(step)
    return entries + app.finish()


def test_same_seed_same_entries_different_seed_different():
    a = run(AppConfig(seed=5), 6)
    assert a == run(AppConfig(seed=5), 6)
    assert a != run(AppConfig(seed=6), 6)


def test_run_decodes_to_a_realistic_profile():
    config = AppConfig(seed=3)
    app = SyntheticApp(config)
    header = app.header(1_700_000_000_000)
    entries = []
    for _ in range(20):
        entries += app.advance(0.5)
    entries += app.finish()
    data = b"".join(
        [
            build_header(header),
            encode_entries(entries, True),
            END_MARKER,
            build_footer(Footer(1_700_000_010_000)),
        ]
    )
    reader = ProfileReader.from_bytes(data)
    assert reader.complete, reader.problem()
    tables = reader.tables
    totals = tables.totals()
    assert totals.modules == 4  # main, render scene, loader task, video task
    assert max(len(tables.stack(p)) for p in tables.paths) >= 8  # a deep call tree
    assert totals.free_realloc_count > 0 and totals.unknown_frees > 0
    assert any(not name.isascii() for name in tables.strings.values())
    leaks = [tables.string(tables.stack(p)[0].function_id) for p, _, _ in tables.leak_sites()[:3]]
    assert "cacheThumbnail" in leaks
    ops = {e[2] for e in entries if e[0] == MEMORY}
    assert ops == {ALLOC, FREE, FREE_REALLOC}


def test_functions_appear_mid_run():
    app = SyntheticApp(AppConfig(seed=2))
    early = app.advance(3.0)
    later = app.advance(5.0)
    names = {e[2] for e in early if e[0] == 0}
    assert "onPlaybackStarted" not in names
    assert "onPlaybackStarted" in {e[2] for e in later if e[0] == 0}
    assert any(e[0] == PATH for e in later)


def test_pause_records_nothing_new():
    app = SyntheticApp(AppConfig(seed=4))
    app.advance(2.0)
    app.paused = True
    assert app.advance(2.0) == []
    app.paused = False
    assert app.advance(1.0)


def test_cpu_only_config_has_no_memory_or_line_data():
    entries = run(AppConfig(seed=1, line_data=False, memory_ops=False), 3)
    assert entries and not any(e[0] == MEMORY for e in entries)
    assert all(e[2] == 0 for e in entries if e[0] == 4)
