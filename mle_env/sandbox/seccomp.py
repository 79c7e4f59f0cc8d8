"""The seccomp profile of the docker sandbox: system calls that no process in the container may make.

Docker's own default profile gates most of these on capabilities (``open_by_handle_at`` is allowed to a
process holding CAP_DAC_READ_SEARCH, ``mount`` and ``unshare`` to one holding CAP_SYS_ADMIN). Here they are
refused whatever the capabilities, so that a process that somehow gains one still cannot open files of the
host by handle, enter or create namespaces, trace other processes or load kernel code. Sockets of the
vsock family (which no network namespace covers: they reach the hypervisor) are refused too. Everything else
is allowed: unlike Docker's default this is a list of what is refused, not of what is allowed, so a system
call a future kernel adds is allowed until it is listed here; the container also runs with
no-new-privileges and a bounding set of three or four capabilities, which gate most of the rest.
"""

from __future__ import annotations

import errno
import json
import platform

#: refused with EPERM, whatever the arguments and capabilities
DENIED_SYSCALLS: tuple[str, ...] = (
    # files of other filesystems (the host's) by handle
    "open_by_handle_at", "name_to_handle_at",
    # other processes' memory and state
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    # the kernel's keyrings, BPF, page-fault handling from user space, performance counters, io_uring
    "keyctl", "add_key", "request_key", "bpf", "userfaultfd", "perf_event_open",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    # namespaces and mounts
    "mount", "umount", "umount2", "unshare", "setns", "pivot_root", "chroot", "mount_setattr", "move_mount",
    "open_tree", "fsopen", "fsconfig", "fsmount", "fspick",
    # sockets whose arguments seccomp cannot see (32-bit x86 multiplexes them all through socketcall)
    "socketcall",
    # watching other filesystems' events, other processes' memory placement
    "fanotify_init", "migrate_pages", "move_pages",
    # the machine itself
    "reboot", "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "create_module",
    "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "settimeofday", "clock_settime", "clock_adjtime",
    "adjtimex", "stime", "syslog", "iopl", "ioperm", "lookup_dcookie", "nfsservctl", "uselib", "vm86",
    "vm86old", "_sysctl", "sysfs", "ustat", "get_kernel_syms", "query_module",
)

AF_VSOCK = 40

#: clone(2) flags that create namespaces; a clone with any of them is refused (plain forks and threads pass)
NAMESPACE_FLAGS: tuple[int, ...] = (
    0x00000080,  # CLONE_NEWTIME
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)


def docker_profile() -> dict:
    """The profile in Docker's JSON format (``security_opt=["seccomp=" + json.dumps(profile)]``)."""
    rules: list[dict] = [{"names": list(DENIED_SYSCALLS), "action": "SCMP_ACT_ERRNO", "errnoRet": errno.EPERM}]
    for flag in NAMESPACE_FLAGS:
        rules.append({"names": ["clone"], "action": "SCMP_ACT_ERRNO", "errnoRet": errno.EPERM,
                      "args": [{"index": 0, "value": flag, "valueTwo": flag, "op": "SCMP_CMP_MASKED_EQ"}]})
    # vsock reaches the hypervisor and other virtual machines' services, whatever the network namespace says
    rules.append({"names": ["socket"], "action": "SCMP_ACT_ERRNO", "errnoRet": errno.EAFNOSUPPORT,
                  "args": [{"index": 0, "value": AF_VSOCK, "op": "SCMP_CMP_EQ"}]})
    # clone3 passes its flags in memory, where seccomp cannot look: ENOSYS makes the C library fall back to
    # clone, whose flags are checked above
    rules.append({"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": errno.ENOSYS})
    return {"defaultAction": "SCMP_ACT_ALLOW", "architectures": _architectures(), "syscalls": rules}


def _architectures() -> list[str]:
    """The host's architecture and the ones its kernel also runs (so 32-bit calls are filtered too)."""
    machine = platform.machine().lower()
    if machine in ("aarch64", "arm64"):
        return ["SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM"]
    return ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"]


def docker_security_option() -> str:
    """The ``security_opt`` entry that applies :func:`docker_profile`."""
    return "seccomp=" + json.dumps(docker_profile(), separators=(",", ":"))
