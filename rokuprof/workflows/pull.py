"""``rokuprof pull`` as a library call: download the profile a device kept (an app built with
``bsprof_data_dest=local``) into a session directory like a captured one.

The device is asked through its Application Installer (:mod:`rokuprof.device.installer`); the
profile is written to the archive piece by piece as it arrives and read by the decoder on the
way, so a large profile is never held in memory. The session is ``complete`` when the file ends
with its footer, ``failed`` when it is corrupt, else ``truncated``; nothing is created when the
device says "No profiling data available".

Then the session is finished as a captured one is: its ``chunks/`` (what ``rokuprof convert``
makes of the archive, read again from the disk off the event loop: the profile has no arrival
times to lay samples out by) and its ``report.html``; a failure of either is recorded in
``session.json`` (``errors``) and costs nothing already written.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rokuprof.capture.chunks import report_json
from rokuprof.capture.config import device_record
from rokuprof.capture.record import SessionRecord, header_facts
from rokuprof.capture.session import SessionFiles
from rokuprof.device.constants import ECP_PORT, INSTALLER_PORT
from rokuprof.device.ecp import DeviceInfo, EcpClient
from rokuprof.device.errors import DeviceError
from rokuprof.device.installer import InstallerClient
from rokuprof.device.limits import INSTALLER_DOWNLOAD_TIMEOUT
from rokuprof.export.report.session import write_session_report
from rokuprof.profile.reader import ProfileReader
from rokuprof.sentry.convert import OfflineConverter
from rokuprof.sentry.settings import ChunkSettings
from rokuprof.store.chunk_files import conversion_paths, write_chunks
from rokuprof.store.layout import SessionDir, SessionStatus, safe_name

#: Bytes of the archive read at a time when it is converted into chunks.
READ_SIZE = 1 << 20

#: Seconds the device's name may take to come from ECP (it only names the directory).
ECP_NAME_TIMEOUT = 3.0


@dataclass(frozen=True)
class PullPlan:
    host: str
    password: str = field(repr=False)
    out: Path = Path("rokuprof-data")
    installer_port: int = INSTALLER_PORT
    ecp_port: int = ECP_PORT
    timeout: float = INSTALLER_DOWNLOAD_TIMEOUT  # the inspect page and the download, in total


@dataclass(frozen=True)
class PulledSession:
    path: Path
    record: dict[str, object]

    @property
    def status(self) -> str:
        return str(self.record["status"])


class _Download:
    """The session being written: created on the first bytes, fed to the decoder too."""

    def __init__(self, plan: PullPlan, device: str, clock: Callable[[], float]) -> None:
        self.plan = plan
        self.device = device
        self.clock = clock
        self.files: SessionFiles | None = None
        self.reader = ProfileReader()
        self.started = clock()

    def create(self) -> SessionFiles:
        """The session directory, named by the run's start once the header is read."""
        if self.files is None:
            header = self.reader.header
            start = header.start_ms / 1000 if header is not None else self.started
            self.files = SessionFiles(self.plan.out, self.device, start)
            self.files.create_now()
        return self.files

    def write(self, data: bytes) -> None:
        if self.reader.error is None:
            self.reader.feed(data)
        self.create().archive.write_now(data)


async def _device_info(plan: PullPlan) -> DeviceInfo | None:
    """Who the device is (names the directory), or None when ECP does not say in time."""
    try:
        async with EcpClient(plan.host, plan.ecp_port, ECP_NAME_TIMEOUT) as ecp:
            return await ecp.device_info()
    except DeviceError:
        return None


async def pull(plan: PullPlan, *, clock: Callable[[], float] = time.time) -> PulledSession | None:
    """Download the kept profile into a new session under ``plan.out``; None when the device
    has none. Raises the installer's errors (:class:`InstallerAuthError`, ...) when nothing
    was written (a device error midway is recorded in the session, ``truncated``, instead), and
    ``OSError`` when the session cannot be written."""
    info = await _device_info(plan)
    name = safe_name(info.serial) if info is not None and info.serial else safe_name(plan.host)
    download = _Download(plan, name, clock)
    error: DeviceError | None = None
    try:
        async with InstallerClient(
            plan.host, plan.password, port=plan.installer_port, timeout=plan.timeout
        ) as installer:
            size = await installer.pull_profile_into(download.write)
    except DeviceError as failed:
        if download.files is None:
            raise
        error, size = failed, download.files.archive.bytes
    except BaseException:  # the disk (OSError), Ctrl-C: the archive is closed, what it has kept
        if download.files is not None:
            with contextlib.suppress(OSError):
                await download.files.archive.close()
        raise
    if size is None:
        return None
    files = download.create()  # an empty profile still makes its session
    await files.archive.close()
    record = _record(download, files, device_record(name, plan.host, info), error)
    await asyncio.to_thread(files.dir.write_record, record.to_json())
    await asyncio.to_thread(_finish, files.dir, files.profiler_id, record)
    await asyncio.to_thread(files.dir.write_record, record.to_json())
    return PulledSession(files.path, record.to_json())


def _finish(session: SessionDir, profiler_id: str, record: SessionRecord) -> None:
    """The chunks and the report of a pulled session, as a capture leaves them; what fails is
    an error in ``record`` (the archive and the other part stay)."""
    try:
        converter = OfflineConverter(ChunkSettings(), profiler_id=profiler_id)
        with session.archive.open("rb") as archive:
            while block := archive.read(READ_SIZE):
                converter.feed(block)
        files = conversion_paths(session.path, envelopes=False)
        record.chunks = len(write_chunks(converter.chunks(), files))
        if converter.summary is not None:
            record.chunk_report = report_json(converter.summary.report)
    except OSError as exc:
        record.add_error("chunks", f"cannot write the chunks: {exc.strerror or exc}")
    try:
        write_session_report(session.path)
    except OSError as exc:
        record.add_error("report", f"cannot write the report: {exc.strerror or exc}")


def _record(
    download: _Download, files: SessionFiles, device: dict[str, object], error: DeviceError | None
) -> SessionRecord:
    reader = download.reader
    reader.close()
    header, footer = reader.header, reader.footer
    record = SessionRecord(
        session=files.name,
        profiler_id=files.profiler_id,
        device=device,
        start=header.start_ms / 1000 if header is not None else download.started,
        bytes=files.archive.bytes,
        entries=reader.entry_count,
        warnings=list(reader.warnings),
    )
    record.profiler["data_dest"] = "local"
    if header is not None:
        record.app.update(name=header.target_name, version=header.target_version)
        record.profiler.update(header_facts(header))
    if footer is not None:
        record.profiler["end_ms"] = footer.end_ms
        record.end = footer.end_ms / 1000
    if error is not None:
        record.add_error("download", str(error))
    problem = reader.problem()
    if reader.complete and error is None:
        record.status = SessionStatus.COMPLETE
        record.end_reason = "downloaded from the device (local mode): the whole profile"
    elif reader.error is not None:
        record.status = SessionStatus.FAILED
        record.end_reason = f"downloaded from the device (local mode); {problem}"
        record.add_error("corrupt", problem or "")
    else:
        record.status = SessionStatus.TRUNCATED
        why = str(error) if error is not None else problem
        record.end_reason = f"downloaded from the device (local mode); {why}"
    return record
