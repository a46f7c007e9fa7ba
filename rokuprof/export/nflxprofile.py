"""FlameScope's nflxprofile: protobuf ``nflxprofile.Profile``, hand-encoded (see the FlameScope
seed for the schema; times are in seconds).

Node 0 is ``root``; under it one node per thread (executable module), then the frames. The
samples are the busy samples of the synthetic 101 Hz timeline of the Sentry chunks, in time
order across threads (threads that ran at the same time have samples 0 s apart, as with several
CPUs in a perf profile), so FlameScope's heat map shows when each thread was busy. A node's
``hit_count`` is the number of samples whose leaf it is: they sum to the number of samples.
Every required field is written. Beyond the seed's fields (which FlameScope needs), frames carry
their file and line, and samples their thread (``samples_tid``, param ``has_samples_tid``).
"""

from __future__ import annotations

from rokuprof.export.calltree import CallTree
from rokuprof.export.model import ExportInput
from rokuprof.export.names import drawn
from rokuprof.export.protobuf import (
    bytes_field,
    double_field,
    int_field,
    packed_doubles,
    packed_varints,
    required_int_field,
    string_field,
)
from rokuprof.timeline import IDLE

# nflxprofile.Profile fields
_START_TIME, _END_TIME, _SAMPLES, _TIME_DELTAS, _NODES, _TITLE, _PARAMS, _SAMPLES_TID = (
    1,
    2,
    3,
    4,
    5,
    6,
    8,
    11,
)
FRAME_LIBTYPE = "user"


def tree_and_samples(inp: ExportInput) -> tuple[CallTree, list[tuple[int, int, int]]]:
    """The node tree and the busy samples as ``(slot, thread, node)``, in time order."""
    tree = CallTree(inp, 0, "root")
    rows: list[tuple[int, int, int]] = []
    for thread in inp.thread_order():
        tree.thread(thread)
        for slot, sid, n in inp.timeline.runs.get(thread, ()):
            if sid == IDLE:
                continue
            node = tree.leaf(thread, sid)
            tree.node(node).hits += n
            rows.extend((slot + i, thread, node) for i in range(n))
    rows.sort()
    return tree, rows


def export(inp: ExportInput) -> bytes:
    tree, rows = tree_and_samples(inp)
    hz = inp.timeline.hz
    start = inp.run.start if inp.run.start is not None else 0.0
    deltas = []
    previous = 0
    for slot, _, _ in rows:
        deltas.append((slot - previous) / hz)
        previous = slot
    end = max(inp.run.end if inp.run.end is not None else start, start + (previous + 1) / hz)
    out = bytearray()
    out += double_field(_START_TIME, start)
    out += double_field(_END_TIME, end)
    out += packed_varints(_SAMPLES, [node for _, _, node in rows])
    out += packed_doubles(_TIME_DELTAS, deltas)
    for node in tree.nodes:
        out += bytes_field(_NODES, int_field(1, node.id) + bytes_field(2, _node(inp, node)))
    title = inp.run.app or "BrightScript profile"
    out += string_field(_TITLE, title)
    out += bytes_field(_PARAMS, string_field(1, "has_samples_tid") + string_field(2, "true"))
    out += packed_varints(_SAMPLES_TID, [thread for _, thread, _ in rows])
    return bytes(out)


def _node(inp: ExportInput, node) -> bytes:
    body = string_field(1, node.name) + required_int_field(2, node.hits)
    for child in node.children:
        body += required_int_field(3, child)
    if node.frame is not None:
        f = inp.frames[node.frame]
        body += string_field(4, FRAME_LIBTYPE)
        body += int_field(5, node.parent or 0)
        file = string_field(1, drawn(f.file)) + (required_int_field(2, f.line) if f.line else b"")
        body += bytes_field(11, file)
    elif node.parent is not None:
        body += string_field(4, "") + int_field(5, node.parent)
    return body
