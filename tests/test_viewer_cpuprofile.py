"""``.cpuprofile`` exports (the CDP ``Profiler.Profile`` object, one file per thread) read by
their real readers: ``nflxprofile --input-format v8`` (the strictest reader here) converts each
thread's file and its tree, DevTools' trace engine models each as a CPU profile, and the
speedscope app imports each as a Chrome CPU profile; all show inspect's time per function within
one sample period per call path, every thread on the run's own time axis. Each file also passes
the structural check of what VS Code's profile editor reads (``check_cdp_profile``).
"""

from __future__ import annotations

import json

import pytest

from rokuprof.export import export_parts
from rokuprof.export.cpuprofile import file_parts
from tests.export_checks import check_cdp_profile
from tests.viewers import nflx, speedscope, trace_engine
from tests.viewers.expected import SAMPLE_PERIOD_US, differences
from tests.viewers.samples import VIEWER_SAMPLES, expected, load


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """{sample: {thread name: its .cpuprofile}}, as `rokuprof export` names them."""
    directory = tmp_path_factory.mktemp("cpuprofile")
    out = {}
    for name in VIEWER_SAMPLES:
        inp = load(name)
        names = {part: inp.threads[t] for t, part in file_parts(inp).items()}
        out[name] = {}
        for part, data in export_parts(inp, "cpuprofile").items():
            path = directory / f"{name}.{part}.cpuprofile"
            path.write_bytes(data)
            out[name][names[part]] = path
    return out


def profiles(paths) -> dict[str, dict]:
    return {thread: json.loads(path.read_text()) for thread, path in paths.items()}


def run_us(name) -> tuple[int, int]:
    run = load(name).run
    start = round(run.start * 1_000_000)
    return start, start + round((run.end - run.start) * 1_000_000)


def compare_per_thread(name, counts, unit_us, key=lambda k: (k[0], k[1])):
    """Problems between {(thread, function): [self, total]} in ``unit_us`` and our wall time."""
    want = expected(name)
    problems = []
    for column, index in (("self", 0), ("total", 1)):
        got = {k: v[index] * unit_us for k, v in counts.items() if v[index]}
        ours = want.by(key, "wall", column)
        paths = want.by(key, "paths", column)
        tolerance = lambda k, paths=paths: SAMPLE_PERIOD_US * paths.get(k, 1)  # noqa: E731
        problems += [f"{column} {p}" for p in differences(got, ours, tolerance)]
    return problems


@pytest.mark.parametrize("name", VIEWER_SAMPLES)
def test_each_thread_is_a_cdp_profile_on_the_runs_time_axis(files, name):
    docs = profiles(files[name])
    assert set(docs) == set(load(name).threads.values())
    start, end = run_us(name)
    for doc in docs.values():
        check_cdp_profile(doc)
        assert (doc["startTime"], doc["endTime"]) == (start, end)
        assert doc["startTime"] + sum(doc["timeDeltas"]) == doc["endTime"]


# -- nflxprofile --input-format v8 --------------------------------------------------------------


@pytest.mark.parametrize("name", VIEWER_SAMPLES)
def test_nflxprofile_v8_converts_it_and_its_tree_shows_our_times(files, name, tmp_path):
    counts: dict = {}
    for tid, (thread, path) in enumerate(files[name].items()):
        doc = json.loads(path.read_text())
        profile = nflx.from_v8(path, tmp_path / f"{tid}.nflxprofile")
        idle = {
            n["id"]
            for n in doc["nodes"]
            if n["callFrame"]["functionName"] in ("(idle)", "(program)")
        }
        assert len(profile.samples) == sum(1 for s in doc["samples"] if s not in idle)
        tree = nflx.tree(tmp_path / f"{tid}.nflxprofile", tmp_path / f"{tid}.json")
        # root -> "(root)" (the converter's process name) -> the profile's (root) -> frames
        counts.update(
            ((thread, fn), v)
            for (_, fn), v in nflx.tree_counts(tree, thread_depth=2).items()
            if fn != "(idle)"
        )
    assert {t for t, _ in counts} == expected(name).threads()
    assert compare_per_thread(name, counts, SAMPLE_PERIOD_US) == []


@pytest.mark.parametrize(
    ("spoil", "error"),
    [
        (lambda d: d["samples"].append(10**6), "KeyError"),
        (lambda d: d.update(timeDeltas=d["timeDeltas"][: len(d["samples"]) // 2]), "IndexError"),
    ],
    ids=["missing-node", "short-timeDeltas"],
)
def test_nflxprofile_v8_harness_refuses_a_broken_cpuprofile(files, tmp_path, spoil, error):
    doc = next(iter(profiles(files["cafe-tv-cpu-only"]).values()))
    spoil(doc)
    path = tmp_path / "broken.cpuprofile"
    path.write_text(json.dumps(doc))
    out = tmp_path / "out.nflxprofile"
    result = nflx.cli("--input-format", "v8", "--output", str(out), str(path))
    assert result.returncode == 1 and error in result.stderr
    with pytest.raises(AssertionError, match="exited 1"):
        nflx.from_v8(path, out)


# -- DevTools' trace engine ----------------------------------------------------------------------


@pytest.mark.parametrize("name", VIEWER_SAMPLES)
def test_trace_engine_models_our_samples_and_timestamps(files, name):
    start, end = run_us(name)
    for path in files[name].values():
        doc = json.loads(path.read_text())
        (profile,) = trace_engine.parse(path, cpuprofile=True)["profiles"]
        assert profile["samples"] == doc["samples"]
        times, t = [], doc["startTime"]
        for delta in doc["timeDeltas"]:
            t += delta
            times.append(t / 1000)  # the engine keeps milliseconds
        assert profile["timestamps"][: len(times)] == pytest.approx(times, abs=1e-6)
        # every thread on the run's own time axis
        assert (profile["startTime"], profile["endTime"]) == pytest.approx((start / 1e3, end / 1e3))
        nodes = {
            (n["id"], n["callFrame"]["functionName"], n["callFrame"]["url"]) for n in doc["nodes"]
        }
        assert {(n["id"], n["functionName"], n["url"]) for n in profile["nodes"]} == nodes


# -- speedscope ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pages(files):
    """{(sample, thread): speedscope's page of that thread's file}."""
    keys = [(name, thread) for name, paths in files.items() for thread in paths]
    paths = [files[name][thread] for name, thread in keys]
    return dict(zip(keys, speedscope.open_files(paths), strict=True))


@pytest.mark.slow
@pytest.mark.parametrize("name", VIEWER_SAMPLES)
def test_speedscope_imports_each_as_a_cpu_profile_and_shows_our_times(pages, files, name):
    want = expected(name)
    counts: dict = {}
    printed: dict = {}
    for thread in files[name]:
        page = pages[(name, thread)]
        assert page.problems() == []
        assert page.importer == "Importing as Chrome CPU Profile"
        (profile,) = page.profiles
        table = speedscope.sandwich(profile, "microseconds", key=lambda r: (r.name, r.file or ""))
        for (fn, file), v in table.items():
            if not fn.startswith("("):
                counts[(thread, fn, file)] = [v[1][0], v[0][0]]
                printed[(thread, fn, file)] = max(v[0][1], v[1][1])
    problems = []
    for column, index in (("self", 0), ("total", 1)):
        got = {k: v[index] for k, v in counts.items() if v[index]}
        ours = want.by(lambda k: k, "wall", column)
        paths = want.by(lambda k: k, "paths", column)

        def tolerance(k, paths=paths):
            return SAMPLE_PERIOD_US * paths.get(k, 1) + printed.get(k, 0)

        problems += [f"{column} {p}" for p in differences(got, ours, tolerance)]
    assert problems == []
