"""Child processes that die with their parent.

A killed `mlpgen` (SIGKILL, a closed terminal) must not leave a self-check or a tuning worker
running on the GPU. A child calls `die_with_parent` first thing. On Linux the kernel then sends
it SIGKILL when the parent dies (prctl PR_SET_PDEATHSIG); that signal is tied to the parent
*thread* that started the child, so children started from worker threads use the portable
fallback only: a daemon thread that notices the parent's death by the parent id changing.

`python -m mlpgen.children PARENT_PID MODULE ARGS...` runs `python -m MODULE ARGS...` so.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import runpy
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1
POLL_S = 0.5


def _pdeathsig() -> bool:
    """Ask Linux to SIGKILL this process when its parent thread ends; False where unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _end() -> None:
    """End this process and, if it leads its own process group, the processes it started."""
    if os.getpgrp() == os.getpid():
        try:
            os.killpg(os.getpid(), signal.SIGKILL)
        except OSError:
            pass
    os._exit(1)


def _watch(parent: int) -> None:
    while True:
        if os.getppid() != parent:
            _end()
        time.sleep(POLL_S)


def die_with_parent(parent: int, thread_bound: bool = False) -> None:
    """End this process when process `parent` ends. `thread_bound`: the parent started us from
    a thread that lives as long as we should (its main thread), so prctl's signal may be used."""
    if os.getppid() != parent:  # the parent died before we got here
        _end()
    if thread_bound and _pdeathsig():
        if os.getppid() != parent:  # it died between the check and the prctl
            _end()
        return
    threading.Thread(target=_watch, args=(parent,), daemon=True, name="parent-watch").start()


def run_module(parent: int, argv: list[str]) -> None:
    die_with_parent(parent, thread_bound=True)
    sys.argv = list(argv)
    runpy.run_module(argv[0], run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    run_module(int(sys.argv[1]), sys.argv[2:])
