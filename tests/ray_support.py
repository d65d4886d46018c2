"""Starting a local Ray instance on a busy machine, for the Ray tests and bench/bench_ray.py.

Ray's node manager gives its agent process a fixed 15 s to come up, which a
machine whose cores are all busy can miss. ``local_ray`` tries ``ray.init``
up to ``attempts`` times, and with ``nice`` (e.g. -10; needs the right to
raise priority) runs Ray's processes at that niceness while they start, then
puts them back to this process's niceness. Once it runs, the library's
``sova_lib.describe.ray_engine.ray_session`` finds it and uses it.
"""
from __future__ import annotations

import logging
import os
import time
from pathlib import Path


class local_ray:
    """Context manager: start a local Ray instance of ``num_cpus`` CPUs (no dashboard) and stop it after.

    ``start_seconds`` is how long ``ray.init`` took (all attempts); ``started`` is false when Ray was
    already running in this process (then it is left running).
    """

    def __init__(self, num_cpus: int | None = None, *, attempts: int = 3, nice: int | None = None):
        self.num_cpus, self.attempts, self.nice = num_cpus, max(1, int(attempts)), nice
        self.started, self.start_seconds = False, 0.0

    def __enter__(self) -> "local_ray":
        import ray

        if ray.is_initialized():
            return self
        start = time.monotonic()
        before = os.getpriority(os.PRIO_PROCESS, 0)
        if self.nice is not None:
            os.setpriority(os.PRIO_PROCESS, 0, self.nice)  # inherited by the processes Ray starts
        try:
            for attempt in range(self.attempts):
                try:
                    ray.init(num_cpus=self.num_cpus, include_dashboard=False, logging_level=logging.WARNING)
                    break
                except Exception as err:  # noqa: BLE001 - Ray raises a bare Exception when its node is late
                    ray.shutdown()
                    if attempt + 1 == self.attempts or "timed out during startup" not in str(err):
                        raise
        finally:
            if self.nice is not None:
                for pid in [os.getpid(), *descendants(os.getpid())]:
                    try:
                        os.setpriority(os.PRIO_PROCESS, pid, before)
                    except OSError:  # gone already
                        pass
        self.started, self.start_seconds = True, time.monotonic() - start
        return self

    def __exit__(self, *exc) -> None:
        if self.started:
            import ray

            ray.shutdown()


def descendants(pid: int) -> list[int]:
    """Ids of the processes below ``pid`` (from ``/proc``; none where there is no ``/proc``)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = entry.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found
