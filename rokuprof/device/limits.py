"""How much a device may send, and for how long: the caps and deadlines of every device client.

Whatever answers on a Roku port may be broken or hostile, so every reply is read incrementally,
abandoned at its byte cap, and every request has a *total* deadline (connect, head and body
together), not only a timeout per read. Where a caller already chooses a timeout
(``control --timeout``, the capture's ``ecp_timeout``), that value is the total deadline and
the defaults below apply otherwise.
"""

from __future__ import annotations

KIB = 1 << 10
MIB = 1 << 20

# -- ECP (TCP 8060) ----------------------------------------------------------------------------
#: A device-info reply is about 2 KB, active-app well under 1 KB.
ECP_MAX_REPLY_BYTES = 1 * MIB
#: Of the body of an answer other than 200, this much is read for the error message.
ECP_MAX_ERROR_BYTES = 4 * KIB
#: Default total deadline of one ECP request.
ECP_TIMEOUT = 5.0

# -- Debug console (TCP 8080) ------------------------------------------------------------------
#: A reply (or the greeting) longer than this without a prompt is refused.
CONSOLE_MAX_REPLY_BYTES = 1 * MIB
#: Default total deadline of connecting (with the greeting), and again of each command.
CONSOLE_TIMEOUT = 5.0
#: Closing (``quit``, then the socket) never takes longer than this.
CONSOLE_CLOSE_TIMEOUT = 0.5

# -- SSDP (UDP 1900) ---------------------------------------------------------------------------
#: Bytes of a datagram that are looked at (a Roku's search response is about 300).
SSDP_MAX_DATAGRAM = 8 * KIB
#: Responder sockets counted as devices per address in one search (a Roku has one; simulated
#: fleets on one loopback address have one each); answers beyond this are ignored.
SSDP_MAX_RESPONDERS_PER_ADDRESS = 32
#: Datagrams looked at per source address (``ssdp.ReplyLimiter``): this many at once (two
#: searches answered by every responder an address may hold), then this many per second.
SSDP_REPLY_BURST = 2 * SSDP_MAX_RESPONDERS_PER_ADDRESS
SSDP_REPLY_RATE = 8.0
#: Source addresses the rate limiter remembers (the least recently heard is forgotten first).
SSDP_MAX_SOURCES = 1024

# -- Profiler stream (TCP 8090) ----------------------------------------------------------------
#: An HTTP response head longer than this is refused.
STREAM_MAX_HEAD_BYTES = 64 * KIB
#: From the first byte of an HTTP answer, its head must be complete within this long.
STREAM_HEAD_TIMEOUT = 10.0
#: From the connect, the answer's first byte must come within this long: a profiled app answers
#: at once, so a port that accepts and stays silent (a hung or hostile listener) does not hold a
#: socket for the whole idle timeout.
STREAM_ANSWER_TIMEOUT = 10.0

# -- Application Installer (TCP 80) ------------------------------------------------------------
#: An installer page (install answer, inspect page) is a few KB.
INSTALLER_MAX_PAGE_BYTES = 1 * MIB
#: A local-mode profile downloaded by ``pull``: past this the download is refused.
INSTALLER_MAX_PROFILE_BYTES = 512 * MIB
#: Default total deadline of one installer operation (an upload and the device's install).
INSTALLER_TIMEOUT = 120.0
#: Default total deadline of ``pull`` (the inspect page and a download of up to the cap).
INSTALLER_DOWNLOAD_TIMEOUT = 600.0

# -- App tracing (ws://HOST:8060/perfetto-session) ----------------------------------------------
#: The largest WebSocket message taken (a Roku's are a trace buffer's chunks, far smaller); one
#: announcing more closes the socket before its payload is read.
TRACE_MAX_MESSAGE_BYTES = 4 * MIB
#: The most trace bytes kept for one run (held until the run ends); past it the socket is
#: closed until the next run and the run's trace is cut there (said in session.json).
TRACE_MAX_RUN_BYTES = 256 * MIB
#: Opening the socket (TCP, the upgrade) and closing it each finish within these seconds.
TRACE_OPEN_TIMEOUT = 5.0
TRACE_CLOSE_TIMEOUT = 3.0
#: After a run's .bsprof ends, its trace is taken once no message came for QUIET seconds, or
#: after SETTLE seconds at most.
TRACE_QUIET_SECONDS = 0.5
TRACE_SETTLE_SECONDS = 3.0
