"""The budget of one `python_exec` call and how it turns into tmpfs sizes and rlimits."""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1024 * 1024
# The call's writable places, each a tmpfs of its own size: the working directory (also
# HOME), /tmp and /dev/shm. Their pages are memory, so they count against `memory_mb`.
SCRATCH_MOUNTS = ("/sandbox", "/tmp", "/dev/shm")
# bwrap's own two processes (the one we start and its init in the PID namespace) also count
# against the call's process limit when a cgroup enforces it.
BWRAP_PROCESSES = 2


@dataclass(frozen=True, slots=True)
class PythonExecLimits:
    """Resource budget for one `python_exec` call."""

    timeout_s: float = 10.0
    cpu_seconds: int = 10
    memory_mb: int = 1024
    max_processes: int = 64
    file_size_mb: int = 16
    open_files: int = 64
    output_bytes: int = 65536
    # Size of each private tmpfs (working directory, /tmp, /dev/shm); None means
    # max(16, 4 * file_size_mb). Never more than a quarter of `memory_mb` each, so the three
    # together leave at least a quarter of the budget to the processes.
    tmpfs_mb: int | None = None

    @property
    def scratch_mb(self) -> int:
        """The effective size of each private tmpfs, in MB (at least 1)."""
        wanted = self.tmpfs_mb if self.tmpfs_mb is not None else max(16, 4 * self.file_size_mb)
        return max(1, min(wanted, self.memory_mb // 4))

    @property
    def scratch_total_mb(self) -> int:
        """What the call's files can hold at most, all private tmpfs together."""
        return self.scratch_mb * len(SCRATCH_MOUNTS)


def rlimits(limits: PythonExecLimits, *, memory_cgroup: bool) -> list[tuple[str, int, int]]:
    """(resource name, soft, hard) set inside the sandbox before the code runs.

    CPU hard = soft + 1 so SIGXCPU comes before SIGKILL. With a memory cgroup the whole call
    (tmpfs included) is bounded there, and RLIMIT_AS only turns one huge allocation into a
    MemoryError; without one, each process gets what the full tmpfs leave of the budget.
    """
    address_mb = limits.memory_mb
    if not memory_cgroup:
        address_mb = max(limits.memory_mb - limits.scratch_total_mb, limits.memory_mb // 4)
    return [
        ("RLIMIT_CORE", 0, 0),
        ("RLIMIT_CPU", limits.cpu_seconds, limits.cpu_seconds + 1),
        ("RLIMIT_AS", address_mb * MIB, address_mb * MIB),
        ("RLIMIT_NPROC", limits.max_processes, limits.max_processes),
        ("RLIMIT_FSIZE", limits.file_size_mb * MIB, limits.file_size_mb * MIB),
        ("RLIMIT_NOFILE", limits.open_files, limits.open_files),
    ]
