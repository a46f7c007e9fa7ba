"""One reader, two body engines: which one a reader uses, what their tables answer to, and
that the reader and the native core import alone in either order."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from rokuprof import _native
from rokuprof.bsprof.decoder import BodyEngine
from rokuprof.bsprof.grammar import build_stream
from rokuprof.bsprof.model import Footer, Header, Limits
from rokuprof.profile import engine as engines
from rokuprof.profile.engine import PURE, PURE_PYTHON_VARIABLE
from rokuprof.profile.protocol import TablesView
from rokuprof.profile.reader import ProfileReader
from rokuprof.profile.tables import ProfileTables

PACKAGE = Path(engines.__file__).resolve().parent.parent
needs_native = pytest.mark.skipif(not _native.built(), reason="the native core is not built")

HEADER = Header(1, 0, 0, 0, 1.0, 1.0, True, True, 0, "a", "", "1", "R", "X", "1")
STREAM = build_stream(
    HEADER, [(0, 1, "main"), (1, 1, 1), (2, 1, 0, 1, 0, 1, 10, 1), (4, 1, 3, 500, 700)], Footer(7)
)


def members(protocol: type) -> list[str]:
    """The members a protocol declares (its methods and properties)."""
    return sorted(
        name
        for name, value in vars(protocol).items()
        if not name.startswith("_") and (callable(value) or isinstance(value, property))
    )


# --- selection --------------------------------------------------------------------------------


@needs_native
def test_readers_use_the_native_engine_unless_told_otherwise(monkeypatch):
    monkeypatch.delenv(PURE_PYTHON_VARIABLE, raising=False)
    native = engines.native()
    assert engines.select() is native and engines.describe() == "native (C)"
    assert ProfileReader().engine is native
    monkeypatch.setenv(PURE_PYTHON_VARIABLE, "1")
    assert engines.select() is PURE
    assert engines.describe() == "pure Python (ROKUPROF_PURE_PYTHON is set)"
    assert ProfileReader().engine is PURE
    assert type(ProfileReader()) is type(ProfileReader(engine=native)) is ProfileReader


@needs_native
@pytest.mark.parametrize(("value", "name"), [("", "native"), ("0", "native"), ("1", "pure")])
def test_select_reads_the_environment_it_is_given(value, name):
    assert engines.select({PURE_PYTHON_VARIABLE: value}).name == name
    assert engines.select({}).name == "native"


def test_without_the_extension_readers_are_pure_python(monkeypatch):
    monkeypatch.delenv(PURE_PYTHON_VARIABLE, raising=False)
    monkeypatch.setattr(_native, "_bsprof", None)
    assert not _native.built() and engines.native() is None
    assert engines.select() is PURE
    assert engines.describe() == "pure Python (the native core is not built)"
    assert ProfileReader().engine is PURE


@needs_native
def test_version_says_which_core_is_active(monkeypatch):
    from typer.testing import CliRunner

    from rokuprof.cli import app

    monkeypatch.delenv(PURE_PYTHON_VARIABLE, raising=False)
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.splitlines()[1] == "decoder core: native (C)"
    monkeypatch.setenv(PURE_PYTHON_VARIABLE, "1")
    result = CliRunner().invoke(app, ["--version"])
    assert result.output.splitlines()[1] == (
        "decoder core: pure Python (ROKUPROF_PURE_PYTHON is set)"
    )


def test_the_variable_is_read_in_one_module():
    readers = sorted(
        str(path.relative_to(PACKAGE.parent))
        for path in PACKAGE.rglob("*.py")
        if PURE_PYTHON_VARIABLE in path.read_text(encoding="utf-8")
    )
    assert readers == ["rokuprof/profile/engine.py"]


# --- the contracts ----------------------------------------------------------------------------


def test_the_tables_of_both_engines_have_every_member_of_the_protocol():
    names = members(TablesView)
    assert len(names) == 28
    tables = [ProfileTables]
    if _native.built():
        from rokuprof._native.reader import NativeTables

        tables.append(NativeTables)
    for cls in tables:
        instance = cls(Limits())
        missing = [name for name in names if not hasattr(instance, name)]
        assert (cls.__name__, missing) == (cls.__name__, [])
        assert isinstance(instance, TablesView)
        for name in names:  # methods stay methods, with the same parameters
            declared = getattr(TablesView, name)
            if callable(declared):
                got = inspect.signature(getattr(cls, name)).parameters
                assert list(got) == list(inspect.signature(declared).parameters), (cls, name)


def test_the_body_of_each_engine_is_a_body_engine(engine):
    body, tables = engine.open(Limits())
    assert isinstance(tables, TablesView)
    for name in members(BodyEngine):
        assert hasattr(body, name), (engine.name, name)
    assert hasattr(body, "error") and hasattr(body, "ended")


def test_one_reader_reads_with_either_engine(engine):
    reader = ProfileReader.from_bytes(STREAM, engine=engine)
    assert type(reader) is ProfileReader and reader.engine is engine
    assert (reader.status, reader.entry_count, reader.footer) == ("complete", 4, Footer(7, 0))
    assert reader.tables.stats(1).cpu == 500
    assert reader.decoder.offset == len(STREAM)


# --- imports ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "modules",
    [
        ["rokuprof.profile.reader", "rokuprof._native.reader"],
        ["rokuprof._native.reader", "rokuprof.profile.reader"],
        ["rokuprof._native", "rokuprof.profile.engine"],
        ["rokuprof.profile.engine", "rokuprof._native"],
    ],
    ids=lambda modules: " then ".join(modules),
)
def test_the_reader_and_the_native_core_import_alone_in_either_order(modules):
    if not _native.built() and "rokuprof._native.reader" in modules:
        pytest.skip("the native core is not built")
    code = "".join(f"import {m}\n" for m in modules)
    code += "from rokuprof.profile.reader import ProfileReader\nProfileReader()\n"
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_without_the_extension_everything_imports_and_reads_in_pure_python():
    """A fresh interpreter where the extension cannot load (as after an install without a C
    compiler)."""
    code = (
        "import sys\n"
        "sys.modules['rokuprof._native._bsprof'] = None\n"
        "from rokuprof.profile import ProfileReader\n"
        "from rokuprof.profile.engine import describe\n"
        "print(ProfileReader().engine.name, 'rokuprof._native.reader' in sys.modules)\n"
        "print(describe())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.splitlines() == ["pure False", "pure Python (the native core is not built)"]
