"""Shared test configuration: hypothesis profiles, a header saying which core is tested, and
the engine fixtures (tests taking one are marked ``engine``).

A command run in-process (``CliRunner``) may switch the process to umask file modes
(``export``, ``report``...); each test starts with the owner-only default again.

``ci`` (the default) keeps the whole suite fast; ``HYPOTHESIS_PROFILE=thorough`` runs many more
examples per property for a longer hunt.
"""

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=40,
    deadline=None,  # a shared 2-core machine: timing is not what these tests check
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_report_header() -> str:
    """Say which decoding core this run tests (a pure-Python run on a checkout whose native core
    was never built would otherwise look like a native one)."""
    from rokuprof.profile.engine import describe

    return f"rokuprof core: {describe()}"


#: Fixtures that make a test depend on an engine: such a test is marked ``engine``.
ENGINE_FIXTURES = {"engine", "native_engine", "engine_env"}


@pytest.hookimpl(tryfirst=True)  # before ``-m`` selects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``engine`` every test that takes an engine fixture (CI runs the ``engine`` tests
    once more with ``ROKUPROF_PURE_PYTHON=1``)."""
    for item in items:
        if ENGINE_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.engine)


def _native_or_skip():
    """The native engine, or a skip: not built, or this run is on the pure-Python engine."""
    from rokuprof.profile import engine as engines

    native = engines.native()
    if native is None:
        pytest.skip("the native core is not built (pip install . needs a C compiler)")
    if engines.select() is not native:
        pytest.skip(f"this run uses {engines.describe()}")
    return native


@pytest.fixture(scope="session", params=["native", "pure"])
def engine(request):
    """A body engine (:mod:`rokuprof.profile.engine`): the test runs on each."""
    from rokuprof.profile.engine import PURE

    return PURE if request.param == "pure" else _native_or_skip()


@pytest.fixture(scope="session")
def native_engine():
    """The native engine (tests of the C core and of its answers against the pure ones)."""
    return _native_or_skip()


def engine_for(param: str):
    """The engine a parameter names, as a fixture generator: ``native``, ``pure``, or
    ``native-queued``: the native core taking every entry through its look-ahead queue
    (``NativeBody.queue_from_cells = 0``; by default only a heap of 65,536 cells or more does,
    and these tests' heaps are small). The queue must not change any answer, so a module whose
    tests compare the native core with the reference or the pure engine runs them on it too, by
    overriding ``engine`` (or ``native_engine``) with a module-scoped fixture over this."""
    if param == "pure":
        from rokuprof.profile.engine import PURE

        yield PURE
        return
    native = _native_or_skip()
    if param == "native":
        yield native
        return
    from rokuprof._native.reader import NativeBody

    NativeBody.queue_from_cells = 0
    try:
        yield native
    finally:
        NativeBody.queue_from_cells = -1


@pytest.fixture
def engine_env(engine, monkeypatch):
    """:func:`engine`, made the engine of every reader the test creates, in this process and
    in the processes it starts."""
    from rokuprof.profile.engine import PURE, PURE_PYTHON_VARIABLE

    if engine is PURE:
        monkeypatch.setenv(PURE_PYTHON_VARIABLE, "1")
    else:
        monkeypatch.delenv(PURE_PYTHON_VARIABLE, raising=False)
    return engine


@pytest.fixture(autouse=True)
def _owner_only_file_mode():
    """Restore rokuprof's file mode after each test (a command may have followed the umask)."""
    from rokuprof.store import files

    mode = files.file_mode()
    yield
    files._file_mode = mode
