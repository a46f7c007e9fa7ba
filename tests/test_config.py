"""The daemon config file: defaults, typed values, errors naming the key, `config check`."""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rokuprof.cli import app
from rokuprof.daemon.config import (
    DSN_ENV,
    ConfigError,
    DeviceEntry,
    build_config,
    load_config,
    parse_listen,
    parse_size,
)
from rokuprof.daemon.config_keys import KEYS, PARSERS, Type, default_toml, toml_value
from rokuprof.sentry.settings import ChunkSettings

EXAMPLE = Path(__file__).parent.parent / "systemd" / "rokuprof.toml"
DSN = "https://0123456789abcdef0123456789abcdef@o1.ingest.example.com/42"


def errors_of(data: dict, env: dict | None = None) -> list[str]:
    with pytest.raises(ConfigError) as info:
        build_config(data, env=env or {})
    return info.value.errors


def test_defaults() -> None:
    cfg = build_config({}, env={})
    assert cfg.capture.chunks.chunk_seconds == 60.0
    assert cfg.devices == ()
    assert cfg.discovery.enabled is False
    assert cfg.sentry.dsn is None
    assert cfg.retention.max_bytes is None and cfg.retention.max_age_days is None
    assert cfg.metrics.listen == ("127.0.0.1", 9464)


def test_full_config_is_typed() -> None:
    cfg = build_config(
        {
            "capture": {"out": "/data/roku", "chunk_seconds": 30},
            "devices": [{"host": "10.0.0.5", "name": "tv", "profiler_port": 9000}],
            "discovery": {"enabled": True, "interval_seconds": 15},
            "sentry": {"dsn": DSN, "environment": "staging"},
            "retention": {"max_age_days": 7, "max_bytes": "1.5GiB"},
            "metrics": {"listen": "[::1]:9100"},
        },
        env={},
    )
    assert cfg.capture.out == Path("/data/roku") and cfg.capture.chunks.chunk_seconds == 30.0
    assert cfg.capture.chunks == ChunkSettings(chunk_seconds=30, environment="staging")
    (dev,) = cfg.devices
    assert (dev.host, dev.name, dev.profiler_port, dev.ecp_port, dev.console_port) == (
        "10.0.0.5",
        "tv",
        9000,
        8060,
        8080,
    )
    assert cfg.discovery.enabled and cfg.discovery.interval_seconds == 15.0
    assert cfg.sentry.dsn.project_id == "42" and cfg.sentry.environment == "staging"
    assert cfg.retention.max_bytes == int(1.5 * 1024**3) and cfg.retention.max_age_days == 7.0
    assert cfg.metrics.listen == ("::1", 9100)


def test_discovery_cap_and_expiry() -> None:
    cfg = build_config({"discovery": {"enabled": True}}, env={})
    assert (cfg.discovery.max_devices, cfg.discovery.expire_seconds) == (64, 600.0)
    disc = {"enabled": True, "max_devices": 16, "expire_seconds": 120}
    cfg = build_config({"discovery": disc}, env={})
    assert (cfg.discovery.max_devices, cfg.discovery.expire_seconds) == (16, 120.0)
    line = (
        "discovery: every 60 s, at most 16 devices, each dropped after 120 s unreachable"
        " (30 s on trial, before its ECP answers)"
    )
    assert line in cfg.summary()
    cfg = build_config({"discovery": disc | {"confirm_seconds": 5}}, env={})
    assert cfg.discovery.confirm_seconds == 5.0
    assert errors_of({"discovery": {"confirm_seconds": 0}}) == [
        "discovery.confirm_seconds: must be a number > 0, got 0"
    ]
    assert errors_of({"discovery": {"max_devices": 0, "expire_seconds": 0}}) == [
        "discovery.max_devices: must be a whole number 1-4096, got 0",
        "discovery.expire_seconds: must be a number > 0, got 0",
    ]
    assert errors_of({"discovery": {"max_devices": 2.5}}) == [
        "discovery.max_devices: must be a whole number 1-4096, got 2.5"
    ]


def test_bad_port_names_the_device_and_key() -> None:
    data = {"devices": [{"host": "a"}, {"host": "b"}, {"host": "c", "profiler_port": "abc"}]}
    assert errors_of(data) == ["devices[2].profiler_port: must be a port number 1-65535, got 'abc'"]
    assert errors_of({"devices": [{"host": "a", "ecp_port": 70000}]}) == [
        "devices[0].ecp_port: must be a port number 1-65535, got 70000"
    ]
    assert errors_of({"devices": [{"host": "a", "console_port": True}]}) == [
        "devices[0].console_port: must be a port number 1-65535, got True"
    ]


def test_unknown_keys_get_a_suggestion() -> None:
    errs = errors_of({"captur": {}, "capture": {"chunk_secs": 5}, "devices": [{"hots": "x"}]})
    assert "captur: unknown key (did you mean 'capture'?)" in errs
    assert "capture.chunk_secs: unknown key (did you mean 'chunk_seconds'?)" in errs
    assert "devices[0].hots: unknown key (did you mean 'host'?)" in errs
    assert "devices[0].host: missing (the device's IP address or host name)" in errs
    (far,) = errors_of({"metrics": {"zzz": 1}})
    assert far.startswith("metrics.zzz: unknown key (known: listen)")


def test_every_problem_is_reported_at_once() -> None:
    errs = errors_of(
        {
            "capture": {"chunk_seconds": 61},
            "sentry": {"environment": "a/b"},
            "discovery": {"enabled": "yes", "interval_seconds": 0},
            "retention": {"max_bytes": "lots", "max_age_days": -1},
            "metrics": {"listen": "nohost"},
            "devices": [{"host": "a", "name": "x"}, {"host": "a", "name": "x"}],
        }
    )
    keys = [e.split(":")[0] for e in errs]
    assert keys == [
        "devices[1]",
        "devices",
        "discovery.enabled",
        "discovery.interval_seconds",
        "capture.chunk_seconds",  # the chunk settings' rules, checked as one, with [sentry]
        "sentry.environment",
        "retention.max_bytes",
        "retention.max_age_days",
        "metrics.listen",
    ]


def test_dsn_from_environment_overrides_the_file_and_errors_hide_the_key() -> None:
    cfg = build_config({"sentry": {"dsn": ""}}, env={DSN_ENV: DSN})
    assert cfg.sentry.dsn_from_env and cfg.sentry.dsn.public_key == DSN.split("//")[1][:32]
    key = "0123456789abcdef0123456789abcdef"
    assert key not in "\n".join(cfg.summary())
    errs = errors_of({"sentry": {"dsn": f"ftp://{key}@host/1"}})
    assert errs == ["sentry.dsn: DSN scheme must be http or https, not 'ftp'"]
    errs = errors_of({}, env={DSN_ENV: f"https://{key}@host/"})
    assert errs[0].startswith(f"${DSN_ENV}: DSN has no project ID") and key not in errs[0]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("20GiB", 20 * 1024**3), ("500MB", 500 * 10**6), ("1.5 KiB", 1536), ("123", 123), (7, 7)],
)
def test_sizes(text: str | int, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["20 GiBs", "-5", "", "GiB", True])
def test_bad_sizes(text: object) -> None:
    with pytest.raises(ValueError):
        parse_size(text)


def test_listen() -> None:
    assert parse_listen("0.0.0.0:1") == ("0.0.0.0", 1)
    assert parse_listen("") is None
    for bad in ("9464", "host:port", "[::1]9464", "h:70000"):
        with pytest.raises(ValueError):
            parse_listen(bad)


def test_load_config_file_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the file"):
        load_config(tmp_path / "missing.toml", env={})
    bad = tmp_path / "bad.toml"
    bad.write_text("[capture\nout = 1\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad, env={})


def test_example_config_is_accepted() -> None:
    cfg = load_config(EXAMPLE, env={})
    assert [d.name for d in cfg.devices] == ["living-room", "bedroom"]
    assert cfg.capture.out == Path("/var/lib/rokuprof")
    assert cfg.retention.max_bytes == 20 * 1024**3


def test_config_check_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DSN_ENV, raising=False)
    runner = CliRunner()
    ok = runner.invoke(app, ["config", "check", str(EXAMPLE)])
    assert ok.exit_code == 0, ok.output
    assert ok.output.startswith(f"OK {EXAMPLE}")
    assert "192.168.1.20 (living-room)" in ok.output
    bad = tmp_path / "bad.toml"
    bad.write_text('[[devices]]\nhost = "a"\nprofiler_port = "abc"\n')
    result = runner.invoke(app, ["config", "check", str(bad)])
    assert result.exit_code == 2
    assert "devices[0].profiler_port: must be a port number 1-65535, got 'abc'" in result.output


def test_spool_limit_and_file_mode() -> None:
    cfg = build_config({}, env={})
    assert cfg.spool.max_bytes == 2 * 1024**3 and cfg.capture.file_mode == 0o600
    assert "files: mode 0600, directories 0700" in cfg.summary()
    cfg = build_config(
        {"spool": {"max_bytes": "500MB"}, "capture": {"file_mode": "0640"}, "sentry": {"dsn": DSN}},
        env={},
    )
    assert cfg.spool.max_bytes == 500 * 10**6 and cfg.capture.file_mode == 0o640
    summary = "\n".join(cfg.summary())
    assert "files: mode 0640, directories 0750" in summary
    assert "spool: at most 476.8 MiB of undelivered chunks, then the oldest are dropped" in summary
    assert build_config({"capture": {"file_mode": 0o644}}, env={}).capture.file_mode == 0o644
    errs = errors_of(
        {"spool": {"max_bytes": "0"}, "capture": {"file_mode": "0400"}, "spol": {}}, env={}
    )
    assert errs == [
        "spol: unknown key (did you mean 'spool'?)",
        "capture.file_mode: 0400 does not let the owner read and write (it must include 0600)",
        "spool.max_bytes: must be more than 0 bytes",
    ]
    assert errors_of({"capture": {"file_mode": "rw-------"}}) == [
        "capture.file_mode: must be an octal mode such as \"0600\", got 'rw-------'"
    ]
    assert errors_of({"capture": {"file_mode": "0755"}}) == [
        "capture.file_mode: 0755 has bits other than read/write (allowed: within 0666)"
    ]


def test_a_dsn_others_can_read_draws_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(DSN_ENV, raising=False)
    path = tmp_path / "rokuprof.toml"
    path.write_text(f'[[devices]]\nhost = "127.0.0.1"\n[sentry]\ndsn = "{DSN}"\n')
    path.chmod(0o644)
    (warning,) = load_config(path, env={}).warnings
    assert f"{path} holds a Sentry DSN and is readable by group and others (mode 0644)" in warning
    assert f"chmod 600 {path}" in warning and "0123456789abcdef" not in warning
    result = CliRunner().invoke(app, ["config", "check", str(path)])
    assert result.exit_code == 0 and result.output.startswith(f"OK {path}")
    assert "warning: " in result.stderr and "readable by group and others" in result.stderr
    path.chmod(0o640)
    assert "readable by group (mode 0640)" in load_config(path, env={}).warnings[0]
    path.chmod(0o600)
    assert load_config(path, env={}).warnings == ()
    # no DSN in the file (none, or only in the environment): nothing to protect
    path.write_text('[sentry]\ndsn = ""\n')
    path.chmod(0o644)
    assert load_config(path, env={DSN_ENV: DSN}).warnings == ()


def test_archive_limits_are_sizes_and_errors_name_the_key() -> None:
    cfg = build_config(
        {
            "capture": {
                "max_session_bytes": "2GiB",
                "max_bytes_after_error": 0,
                "min_free_bytes": "5GB",
            }
        },
        env={},
    )
    arc = cfg.capture.archive
    assert (arc.max_session_bytes, arc.max_bytes_after_error, arc.min_free_bytes) == (
        2 * 1024**3,
        0,
        5 * 1000**3,
    )
    assert (
        "archive: at most 2 GiB per session, 0 B kept after corrupt data, stop below"
        in "\n".join(cfg.summary())
    )
    defaults = build_config({}, env={}).capture.archive
    assert (
        defaults.max_session_bytes,
        defaults.max_bytes_after_error,
        defaults.min_free_bytes,
    ) == (
        4 * 1024**3,
        16 * 1024**2,
        1024**3,
    )
    with pytest.raises(ConfigError) as info:
        build_config(
            {"capture": {"max_session_bytes": "lots", "min_free_bytes": -1, "max_bytes_after": 1}},
            env={},
        )
    errors = "\n".join(info.value.errors)
    assert "capture.max_session_bytes: expected a size" in errors
    assert "capture.min_free_bytes: a size cannot be negative" in errors
    assert "capture.max_bytes_after: unknown key (did you mean 'max_bytes_after_error'?)" in errors


def _check(tmp_path: Path, text: str, *extra: str):
    path = tmp_path / "rokuprof.toml"
    path.write_text(text)
    path.chmod(0o600)
    return CliRunner().invoke(app, ["config", "check", str(path), *extra], env={DSN_ENV: ""})


def test_config_check_reports_every_problem_a_run_would_hit(tmp_path: Path) -> None:
    """out is a regular file, nothing to capture, a DSN that is not one, a non-numeric project
    ID: all reported at once (exit 2), in words a user can act on."""
    (tmp_path / "out-file").write_text("")
    result = _check(
        tmp_path,
        f'[capture]\nout = "{tmp_path / "out-file"}"\n[sentry]\ndsn = "not-a-dsn"\n',
    )
    assert result.exit_code == 2
    assert "capture.out: " in result.stderr and "exists and is not a directory" in result.stderr
    assert "sentry.dsn: not a DSN (expected https://KEY@HOST/ID)" in result.stderr
    result = _check(tmp_path, '[sentry]\ndsn = "https://key@sentry.example.com/abc"\n')
    assert result.exit_code == 2
    assert "the project ID must be a number, not 'abc'" in result.stderr
    assert "nothing to capture" in result.stderr
    assert "problem(s)" in result.stderr.splitlines()[0]


def test_config_check_json(tmp_path: Path) -> None:
    good = _check(tmp_path, '[[devices]]\nhost = "127.0.0.1"\n', "--json")
    assert good.exit_code == 0
    report = json.loads(good.stdout)
    assert report["ok"] is True and report["problems"] == [] and report["summary"]
    bad = _check(tmp_path, "[discovery]\nenabled = false\n", "-j")
    assert bad.exit_code == 2 and json.loads(bad.stdout)["problems"]


def test_a_sessions_chunk_bytes_cap_is_a_size() -> None:
    cfg = build_config({"capture": {"max_session_chunk_bytes": "64MiB"}}, env={})
    assert cfg.capture.chunks.max_session_chunk_bytes == 64 * 1024**2
    default = build_config({}, env={}).capture.chunks.max_session_chunk_bytes
    assert default == ChunkSettings().max_session_chunk_bytes == 1024**3
    for bad, says in (("lots", "expected a size"), (0, "above 0")):
        with pytest.raises(ConfigError) as error:
            build_config({"capture": {"max_session_chunk_bytes": bad}}, env={})
        assert len(error.value.errors) == 1
        assert error.value.errors[0].startswith("capture.max_session_chunk_bytes: ")
        assert says in error.value.errors[0]


# -- the table of keys ---------------------------------------------------------------------------


def test_every_key_takes_its_own_default_written_as_a_file_writes_it() -> None:
    for keys in KEYS.values():
        for key in keys.values():
            if key.default is None or key.required or key.type is Type.RULED:
                continue
            written = tomllib.loads(f"v = {toml_value(key, key.default)}")["v"]
            assert PARSERS[key.type](key, written) == key.default, key.name


def test_the_default_config_is_the_defaults() -> None:
    data = tomllib.loads(default_toml())
    assert set(data) == set(KEYS) and data["retention"] == {}  # no default: keep everything
    made, defaults = build_config(data, env={}), build_config({}, env={})
    assert made.devices == (DeviceEntry("192.168.1.20"),)
    assert replace(made, devices=()) == defaults
    assert "# max_age_days: delete sessions older than it" in default_toml()


def test_the_example_config_shows_the_defaults_of_the_table() -> None:
    """Each commented `# key = value` of systemd/rokuprof.toml is that key's default (but
    `export`'s, an example of a list)."""
    section, shown = "", 0
    for line in EXAMPLE.read_text().splitlines():
        if line.startswith("["):
            section = line.strip("[]")
        elif (m := re.fullmatch(r"# (\w+) = (.+)", line)) and m.group(1) != "export":
            key = KEYS[section][m.group(1)]
            written = tomllib.loads(f"v = {m.group(2)}")["v"]
            assert PARSERS[key.type](key, written) == key.default, line
            shown += 1
    assert shown == 14


def test_the_documented_keys_are_the_keys_of_the_table() -> None:
    text = (Path(__file__).parent.parent / "docs" / "daemon.md").read_text()
    rows = [line.split("|")[1] for line in text.splitlines() if line.startswith("| `[")]
    documented = set()
    for cell in rows:
        section = re.match(r" `\[+(\w+)\]+ ", cell).group(1)
        documented |= {(section, k) for k in re.findall(r"(\w+)`", cell)}
    assert documented == {(s, k) for s, keys in KEYS.items() for k in keys}


def test_a_wrong_value_for_every_key_is_one_problem_per_key_all_at_once() -> None:
    data: dict = {section: {k: {} for k in keys} for section, keys in KEYS.items()}
    data["devices"] = [data["devices"]]
    errs = errors_of(data)
    where = {"devices": "devices[0]"}
    expected = [f"{where.get(s, s)}.{k}" for s, keys in KEYS.items() for k in keys]
    assert sorted(e.split(":")[0] for e in errs) == sorted(expected)
    assert "capture.max_paths: must be a number > 0 and <= 2.14748e+09, got {}" in errs
    assert "sentry.dsn: must be a string" in errs  # never the value: it may hold the key
