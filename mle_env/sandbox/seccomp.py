"""The seccomp filters of the sandboxes: system calls that no agent process may make.

Docker takes :func:`docker_profile` (its JSON format); the local sandbox installs :func:`local_filter` (a BPF
program built with libseccomp) in each program the worker starts, before it enters the namespaces.

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

import ctypes
import ctypes.util
import errno
import functools
import json
import os
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


# -- the local sandbox: the same rules as a BPF program ---------------------------------------------------------
#: what the local sandbox's programs must still do after the filter is installed: nsenter enters the
#: namespaces (setns) before it runs the agent's program
LOCAL_ALLOWED = frozenset({"setns"})
_SCMP_ACT_ALLOW = 0x7FFF0000
_SCMP_CMP_EQ, _SCMP_CMP_MASKED_EQ = 4, 7
_SECONDARY_ARCHES = {"x86_64": (0x40000003, 0x4000003E), "amd64": (0x40000003, 0x4000003E)}  # i386, x32


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


def _errno(value: int) -> int:
    return 0x00050000 | (value & 0xFFFF)


@functools.cache
def local_filter() -> bytes | None:
    """The rules of :func:`docker_profile` (but ``setns``, which nsenter needs) as a classic BPF program for
    ``prctl(PR_SET_SECCOMP)``, built once per process with the system's libseccomp; None where libseccomp
    cannot be loaded (the local sandbox then runs without a filter and says so)."""
    name = ctypes.util.find_library("seccomp")
    try:
        lib = ctypes.CDLL(name or "libseccomp.so.2", use_errno=True)
    except OSError:
        return None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_arch_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_ArgCmp)]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    ctx = lib.seccomp_init(_SCMP_ACT_ALLOW)
    if not ctx:
        return None
    try:
        for arch in _SECONDARY_ARCHES.get(platform.machine().lower(), ()):
            lib.seccomp_arch_add(ctx, arch)  # -EEXIST for the native one: fine

        def rule(syscall: str, action: int, *args: tuple[int, int, int, int]) -> None:
            number = lib.seccomp_syscall_resolve_name(syscall.encode())
            if number == -1:  # __NR_SCMP_ERROR: not a system call on these architectures
                return
            array = (_ArgCmp * len(args))(*[_ArgCmp(*a) for a in args]) if args else None
            if lib.seccomp_rule_add_array(ctx, action, number, len(args), array) != 0:
                raise OSError(f"libseccomp refused a rule for {syscall}")

        for syscall in DENIED_SYSCALLS:
            if syscall not in LOCAL_ALLOWED:
                rule(syscall, _errno(errno.EPERM))
        for flag in NAMESPACE_FLAGS:
            rule("clone", _errno(errno.EPERM), (0, _SCMP_CMP_MASKED_EQ, flag, flag))
        rule("socket", _errno(errno.EAFNOSUPPORT), (0, _SCMP_CMP_EQ, AF_VSOCK, 0))
        rule("clone3", _errno(errno.ENOSYS))
        read_end, write_end = os.pipe()
        try:
            if lib.seccomp_export_bpf(ctx, write_end) != 0:
                return None
            os.close(write_end)
            write_end = -1
            program = b""
            while chunk := os.read(read_end, 65536):
                program += chunk
        finally:
            os.close(read_end)
            if write_end >= 0:
                os.close(write_end)
        return program if program and len(program) % 8 == 0 else None
    except OSError:
        return None
    finally:
        lib.seccomp_release(ctx)
