"""Shared test configuration: hypothesis profiles, and a header saying which core is tested.

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
    from rokuprof import _native

    return f"rokuprof core: {_native.describe()}"


@pytest.fixture(autouse=True)
def _owner_only_file_mode():
    """Restore rokuprof's file mode after each test (a command may have followed the umask)."""
    from rokuprof.store import files

    mode = files.file_mode()
    yield
    files._file_mode = mode
