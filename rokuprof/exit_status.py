"""The exit statuses of every rokuprof command, their one home: the CLI ends a command with them
(:mod:`rokuprof.cli.exits`), a workflow raises them (:class:`rokuprof.workflows.errors.Stop`).

=====  ===========  ==========================================================================
 0     OK           success; ``watch``, ``demo``, ``profile``: every run ended complete or
                    interrupted (Ctrl-C), and ``profile``'s gate passed;
                    ``daemon``: a clean stop (SIGTERM), whatever its sessions' outcomes
 1     FAILED       the work started and could not be finished for a reason outside the data:
                    an output could not be written midway, the device could not be reached
                    (``control``, ``discover``), the daemon could not start; ``diff
                    --fail-over``, ``profile --fail-over``: a verdict is ``regressed``;
                    ``profile``: the device did not install the app (its words quoted), or
                    the app never streamed
 2     USAGE        bad usage, or a problem found before any work started (nothing is written):
                    a missing or unreadable input, not a .bsprof, an output that cannot be
                    created or written, a malformed or unknown host, a port out of range, a bad
                    config; ``profile``, ``pull``: no developer password, or one the device
                    refused; ``profile``: a bad scenario or app (before anything is installed)
 3     INCOMPLETE   the data was incomplete or corrupt (what could be read was used), a
                    conversion that produced nothing (the reason is printed), a ``watch`` run
                    that ended truncated or failed; ``pull``: the device had no profile ("No
                    profiling data available") or the one pulled is cut short
 4     UNDECIDED    ``diff --fail-over``, ``profile --fail-over``: no verdict is ``regressed``
                    but one is ``unknown`` (a figure moved past its floor, the runs too few or
                    too scattered to tell): run more (``--repeat``, ``--max-repeat``)
=====  ===========  ==========================================================================

The daemon's sessions do not change its status: they are in its logs, metrics and each
``session.json``, and a non-zero status would make systemd count a normal stop as a failure.

A closed output pipe (``| head -1``) is no status of its own: what follows goes to /dev/null
(``output.py``), nothing is said, and the command exits as its work decides, so a pipeline's
status never depends on when its reader stopped (never 1, ``diff --fail-over``'s regression).
"""

from __future__ import annotations

OK = 0
FAILED = 1
USAGE = 2
INCOMPLETE = 3
UNDECIDED = 4
