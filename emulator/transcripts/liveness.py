"""Who writes a call, and whether that writer has ended (so its running calls can be closed).

Each call records the process that writes it (``writer_identity``); opening the store ends, as
``interrupted``, every running call whose writer is certainly gone (``writer_gone``).
"""

from __future__ import annotations

import os
import socket
import uuid
from pathlib import Path

_PROC = Path("/proc")
_identities: dict[int, tuple[int, str]] = {}


def writer_identity() -> tuple[int, str]:
    """This process as a call's writer: its pid and a start id that a recycled pid does not
    repeat. On Linux ``linux/BOOT_ID/PID_NAMESPACE/START_TIME`` (the start time in clock ticks
    since boot, field 22 of ``/proc/PID/stat``), which another process can check; elsewhere
    ``host/HOSTNAME/RUN_ID`` (a random run id), checked by the pid alone."""
    pid = os.getpid()  # per pid: a forked child is another writer
    known = _identities.get(pid)
    if known is None:
        host = _linux_host()
        started = _start_time(pid)
        if host is not None and started is not None:
            start = f"linux/{host[0]}/{host[1]}/{started}"
        else:
            start = f"host/{socket.gethostname()}/{uuid.uuid4().hex}"
        known = _identities[pid] = (pid, start)
    return known


def writer_gone(pid: int, start: str) -> bool:
    """True only when the writer ``(pid, start)`` has certainly ended:

    - Linux, same boot and pid namespace: no process ``pid``, a zombie, or one that started at
      another time (the pid was recycled);
    - Linux, another boot id: that boot is over (SQLite's WAL works on one host only, so the
      writer was on this machine);
    - elsewhere, same host name: no process ``pid``.

    Anything else (another pid namespace, such as a container sharing the file; another host
    name; a start id this botemu does not know) cannot be told, and counts as alive."""
    kind, _, rest = start.partition("/")
    if kind == "linux":
        boot, _, rest = rest.partition("/")
        namespace, _, started = rest.rpartition("/")
        host = _linux_host()
        if host is None:
            return False
        if boot != host[0]:
            return True
        if namespace != host[1]:
            return False
        stat = _stat(pid)
        return stat is None or stat[0] in ("Z", "X") or stat[19] != started
    if kind == "host":
        name = rest.partition("/")[0]
        if name != socket.gethostname():
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except OSError:  # it exists (another user's)
            return False
    return False


def _linux_host() -> tuple[str, str] | None:
    """(boot id, pid namespace) of this process, or None off Linux."""
    try:
        boot = (_PROC / "sys/kernel/random/boot_id").read_text().strip()
        namespace = os.readlink(_PROC / "self/ns/pid")
    except OSError:
        return None
    return (boot, namespace) if boot and "/" not in boot + namespace else None


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (field 3, the state, first)."""
    try:
        text = (_PROC / str(pid) / "stat").read_text()
    except (OSError, ValueError):
        return None
    fields = text[text.rfind(")") + 1 :].split()
    return fields if len(fields) > 19 else None


def _start_time(pid: int) -> str | None:
    stat = _stat(pid)
    return None if stat is None else stat[19]
