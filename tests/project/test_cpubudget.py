"""bench/cpubudget.py: a process held to a share of one core (a Pi's speed for the benches).
Its speed is the benches' to measure; here: the group it makes, what it refuses, and that
nothing is left behind."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

_spec = importlib.util.spec_from_file_location("cpubudget", ROOT / "bench" / "cpubudget.py")
assert _spec and _spec.loader
cpubudget = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cpubudget)

V1 = """cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0
cgroup /sys/fs/cgroup/cpuacct cgroup rw,relatime,cpuacct 0 0
cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0
"""
V2_ONLY = "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime 0 0\n"


def test_it_finds_cgroup_v1s_cpu_controller_and_refuses_clearly_without_one() -> None:
    assert cpubudget.cpu_controller(V1) == Path("/sys/fs/cgroup/cpu")
    assert cpubudget.cpu_controller(V1.replace(",cpu 0", ",cpu,cpuacct 0")) == Path(
        "/sys/fs/cgroup/cpu"
    )
    with pytest.raises(cpubudget.CpuBudgetUnavailable, match="no cgroup v1 `cpu` controller"):
        cpubudget.cpu_controller(V2_ONLY)


@pytest.mark.parametrize("fraction", [0, -0.1, 1.5])
def test_a_share_is_a_fraction_of_one_core(fraction: float) -> None:
    with pytest.raises(ValueError, match="fraction of one core"), cpubudget.cpu_budget(fraction):
        pass


def _can_hold() -> str:
    try:
        root = cpubudget.cpu_controller()
    except cpubudget.CpuBudgetUnavailable as error:
        return str(error)
    return "" if os.access(root, os.W_OK) else f"{root} is not writable (not root)"


@pytest.mark.slow
@pytest.mark.skipif(bool(_can_hold()), reason=f"no CPU budget here: {_can_hold()}")
def test_a_child_runs_in_the_group_at_its_quota_with_real_time_allowed_and_it_is_removed() -> None:
    probe = (
        "import os; print(open('/proc/self/cgroup').read()); "
        "os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(4)); print('SCHED_FIFO ok')"
    )
    with cpubudget.cpu_budget(0.25) as group:
        assert (group.path / "cpu.cfs_period_us").read_text().strip() == "10000"
        assert (group.path / "cpu.cfs_quota_us").read_text().strip() == "2500"
        done = subprocess.run(
            [sys.executable, "-c", probe],
            preexec_fn=group.enter,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert f":/{group.path.name}\n" in done.stdout
        assert "SCHED_FIFO ok" in done.stdout
    assert not group.path.exists()
