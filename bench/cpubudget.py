"""A process held to a fraction of one CPU core: a Pi's speed on this machine, for the benches.

A cgroup v1 `cpu` controller group with a CFS quota (cpu.cfs_quota_us per cpu.cfs_period_us)
holds every thread of the processes in it to that share; the process keeps running, only
slower, as on a slower CPU (`cpulimit` SIGSTOPs the whole process instead: 0.5-s stalls, not a
fair test). The period is 10 ms: the kernel's default 100 ms stalls a 25-% process up to
75 ms at a time. Where the kernel groups real-time threads too (cpu.rt_runtime_us), a new
group gets no real-time time at all and the box's SCHED_FIFO threads are refused (EPERM):
the group gets real-time time too (below), so the box runs as it does on a Pi. The
group also has the first claim on its share (cpu.shares at the kernel's maximum): on this
busy 2-core machine a process at the default weight gets less than its quota, and the
fraction would no longer be what was asked; the quota still caps it.
cgroup v2's cpu.max is not used: this machine's unified hierarchy has no cpu controller.
Needs root (the cgroup files).

As a library (bench/startup.py, the timing and hall benches):

    from cpubudget import cpu_budget
    with cpu_budget(0.25) as cg:                    # a new group; removed on leaving
        box = subprocess.Popen(cmd, preexec_fn=cg.enter)   # the child joins before exec
        cg.add(other.pid)                           # or move a running process in
        ...
        print(cg.throttled())                       # periods the quota held it back

    In a shell command (tmux, sh -c): `echo $$ > {cg.procs} && exec CMD`.
    `cpu=N` also pins the group's processes to core N (the enter/add calls do it).
    A group's real-time share is its quota, at most 20 % (2 ms a period): all groups together
    get the kernel's 95 % of a core, so four groups fit (a hall of four boxes), a fifth is
    refused with CpuBudgetUnavailable. The kernel counts real-time time apart from the CFS
    quota: a box's SCHED_FIFO threads (its runner and audio writer, a small part of its CPU)
    may add up to that share again.

As a command:

    sudo .venv/bin/python bench/cpubudget.py 0.25 -- CMD ARGS   # run CMD at 25 % of a core
    sudo .venv/bin/python bench/cpubudget.py --check            # is a CPU budget possible?

Raises (the command: exit 2 with the reason) `CpuBudgetUnavailable` where there is no cgroup
v1 cpu controller or its files are not writable."""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

PERIOD_US = 10_000  # 10 ms: short stalls (see above)
RT_MAX_US = 2_000  # a group's real-time time: at most 2 ms a period, so four groups fit
SHARES = 262_144  # cgroup v1's highest cpu.shares: the group gets its quota first (see above)
_serial = itertools.count(1)


class CpuBudgetUnavailable(RuntimeError):
    """No cgroup v1 cpu controller to hold a process to a CPU share (says why)."""


def cpu_controller(mounts: str | None = None) -> Path:
    """The mount point of the cgroup v1 hierarchy that has the `cpu` controller."""
    text = mounts if mounts is not None else Path("/proc/self/mounts").read_text()
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[2] == "cgroup" and "cpu" in fields[3].split(","):
            return Path(fields[1])
    raise CpuBudgetUnavailable(
        "no cgroup v1 `cpu` controller is mounted (only cgroup2, or none): a CPU budget needs "
        "cpu.cfs_quota_us; cgroup2's cpu.max is not supported by this bench"
    )


class CpuGroup:
    """One cgroup v1 cpu group holding its processes to `fraction` of one core."""

    def __init__(self, path: Path, fraction: float, cpu: int | None = None) -> None:
        self.path = path
        self.fraction = fraction
        self.cpu = cpu
        self.procs = path / "cgroup.procs"

    def _write(self, name: str, value: int) -> None:
        (self.path / name).write_text(f"{value}\n")

    def setup(self) -> None:
        quota = max(1000, round(PERIOD_US * self.fraction))  # (the kernel's minimum: 1 ms)
        self._write("cpu.cfs_period_us", PERIOD_US)
        self._write("cpu.cfs_quota_us", quota)
        self._write("cpu.shares", SHARES)
        if (self.path / "cpu.rt_runtime_us").exists():  # (CONFIG_RT_GROUP_SCHED)
            runtime = min(quota, RT_MAX_US)
            self._write("cpu.rt_period_us", PERIOD_US)
            try:
                self._write("cpu.rt_runtime_us", runtime)
            except OSError as error:
                raise CpuBudgetUnavailable(
                    f"{self.path}/cpu.rt_runtime_us {runtime}: refused ({error.strerror}): other "
                    "cpu groups hold the machine's real-time time (95 % of a core in all); "
                    "without it the box's SCHED_FIFO threads would be refused"
                ) from error

    def enter(self) -> None:
        """Put the calling process in the group (a Popen's preexec_fn: the child, before exec)."""
        self.add(os.getpid())

    def add(self, pid: int) -> None:
        """Move a running process (all its threads) into the group."""
        if self.cpu is not None:
            os.sched_setaffinity(pid, {self.cpu})
        self.procs.write_text(f"{pid}\n")

    def throttled(self) -> int:
        """How many periods the quota held the group back."""
        for line in (self.path / "cpu.stat").read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "nr_throttled":
                return int(value)
        return 0

    def remove(self) -> None:
        """Move what is still in the group back to its parent, then remove the group (a
        process that is ending stays listed a moment: tried again for up to 5 s)."""
        parent = self.path.parent / "cgroup.procs"
        deadline = time.monotonic() + 5
        while True:
            for pid in self.procs.read_text().split():
                with contextlib.suppress(OSError):  # (it ended meanwhile)
                    parent.write_text(f"{pid}\n")
            try:
                self.path.rmdir()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)


@contextlib.contextmanager
def cpu_budget(fraction: float, cpu: int | None = None, name: str = "") -> Iterator[CpuGroup]:
    """A new cpu group at `fraction` (0 < f ≤ 1) of one core; removed on leaving."""
    if not 0 < fraction <= 1:
        raise ValueError(f"a CPU budget is a fraction of one core, 0 < f <= 1, not {fraction}")
    root = cpu_controller()
    if not os.access(root, os.W_OK):
        raise CpuBudgetUnavailable(f"{root} is not writable: a CPU budget needs root")
    path = root / (name or f"timekeeper-bench-{os.getpid()}-{next(_serial)}")
    path.mkdir()
    group = CpuGroup(path, fraction, cpu)
    try:
        group.setup()
        yield group
    finally:
        group.remove()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Run a command held to a fraction of one CPU core (cgroup v1 cpu quota)."
    )
    parser.add_argument("fraction", nargs="?", type=float, help="e.g. 0.25 for 25 %% of a core")
    parser.add_argument("--cpu", type=int, help="also pin it to this core")
    parser.add_argument("--check", action="store_true", help="only say whether it can be done")
    argv = sys.argv[1:] if argv is None else argv
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    args.command = argv[split + 1 :]
    try:
        if args.check:
            with cpu_budget(0.5) as group:
                rt = (group.path / "cpu.rt_runtime_us").exists()
                print(f"cpubudget: ok: {group.path.parent} (cgroup v1 cpu; real-time share: {rt})")
            return 0
        if args.fraction is None or not args.command:
            parser.error("give a fraction and a command: cpubudget.py 0.25 -- CMD ARGS")
        with cpu_budget(args.fraction, args.cpu) as group:
            started = time.monotonic()
            done = subprocess.run(args.command, preexec_fn=group.enter, check=False)
            used = resource.getrusage(resource.RUSAGE_CHILDREN)
            print(
                f"cpubudget: {args.fraction:.0%} of a core: {used.ru_utime + used.ru_stime:.2f} s "
                f"of CPU in {time.monotonic() - started:.2f} s, "
                f"{group.throttled()} periods throttled",
                file=sys.stderr,
            )
            return done.returncode
    except (CpuBudgetUnavailable, ValueError) as error:
        print(f"cpubudget: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
