"""Instructions per element of every throughput case at the machine's own level, AVX-512
included, by single-stepping each kernel call under ptrace.

    python3 benches/stepcount.py [--elements N] [--runs R] [--filter TEXT] [--isa LEVEL]

valgrind (``benches/instructions.sh``) cannot run AVX-512 code, and hardware counters
(``perf``) are not available on every machine. Single-stepping counts what the processor
retires, whatever the instruction set: the harness (``examples/throughput --count``) is
started under ptrace with a breakpoint on ``counted_run``; each call is stepped one
instruction at a time until it returns, and the steps are divided by the elements. A
``rep``-prefixed instruction traps once per iteration, as callgrind counts it. Linux x86-64
only; about a million steps a few seconds, so keep ``--elements`` small (the default 65,536
elements, one run per case, takes a minute or two for the whole harness).
"""

import argparse
import ctypes
import os
import signal
import struct
import subprocess
import sys

PTRACE_TRACEME, PTRACE_PEEKTEXT, PTRACE_POKETEXT = 0, 1, 4
PTRACE_CONT, PTRACE_SINGLESTEP, PTRACE_GETREGS, PTRACE_SETREGS = 7, 9, 12, 13

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]


class Regs(ctypes.Structure):
    """``struct user_regs_struct`` of x86-64."""

    _fields_ = [
        (n, ctypes.c_ulonglong)
        for n in (
            "r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax rip cs "
            "eflags rsp ss fs_base gs_base ds es fs gs"
        ).split()
    ]


def ptrace(req, pid, addr=0, data=0):
    ctypes.set_errno(0)
    r = libc.ptrace(req, pid, ctypes.c_void_p(addr), ctypes.c_void_p(data))
    if r == -1 and ctypes.get_errno() != 0 and req != PTRACE_PEEKTEXT:
        raise OSError(ctypes.get_errno(), f"ptrace({req})")
    return r


def regs(pid):
    r = Regs()
    ptrace(PTRACE_GETREGS, pid, 0, ctypes.addressof(r))
    return r


def set_regs(pid, r):
    ptrace(PTRACE_SETREGS, pid, 0, ctypes.addressof(r))


def peek(pid, addr):
    return ptrace(PTRACE_PEEKTEXT, pid, addr) & 0xFFFF_FFFF_FFFF_FFFF


def poke(pid, addr, word):
    ptrace(PTRACE_POKETEXT, pid, addr, struct.unpack("<q", struct.pack("<Q", word))[0])


def wait_trap(pid):
    _, status = os.waitpid(pid, 0)
    if os.WIFEXITED(status):
        return None
    if not os.WIFSTOPPED(status):
        raise RuntimeError(f"unexpected status {status:#x}")
    sig = os.WSTOPSIG(status)
    if sig != signal.SIGTRAP:
        raise RuntimeError(f"child stopped by signal {sig}")
    return status


def symbol_offset(binary, name):
    out = subprocess.run(["nm", binary], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and name in parts[2]:
            return int(parts[0], 16)
    sys.exit(f"no symbol {name} in {binary}")


def load_base(pid, binary):
    real = os.path.realpath(binary)
    for line in open(f"/proc/{pid}/maps"):
        fields = line.split()
        if len(fields) >= 6 and fields[5] == real and int(fields[2], 16) == 0:
            return int(fields[0].split("-")[0], 16)
    sys.exit("cannot find the binary's mapping")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default="target/release/examples/throughput")
    ap.add_argument("--elements", type=int, default=65536)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--filter")
    ap.add_argument("--isa", help="ZQUANT_MAX_ISA for the child (default: the machine's)")
    ap.add_argument("--out", default="target/stepcount.md")
    a = ap.parse_args()

    offset = symbol_offset(a.binary, "counted_run")
    args = [a.binary, "--count", "--elements", str(a.elements), "--runs", str(a.runs)]
    if a.filter:
        args += ["--filter", a.filter]
    env = dict(os.environ)
    if a.isa:
        env["ZQUANT_MAX_ISA"] = a.isa
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.dup2(write_fd, 1)
        ptrace(PTRACE_TRACEME, 0)
        os.execve(a.binary, args, env)
    os.close(write_fd)
    wait_trap(pid)  # stopped at exec
    entry = load_base(pid, a.binary) + offset
    original = peek(pid, entry)
    poke(pid, entry, (original & ~0xFF) | 0xCC)

    counts = []
    ptrace(PTRACE_CONT, pid)
    while wait_trap(pid) is not None:
        r = regs(pid)
        if r.rip - 1 != entry:
            raise RuntimeError(f"trap at {r.rip:#x}, not at the breakpoint")
        # Undo the breakpoint, rewind to it, and step through the call until it returns
        # (the stack pointer back above the return address).
        poke(pid, entry, original)
        r.rip = entry
        set_regs(pid, r)
        ret_sp = r.rsp + 8
        steps = 0
        while True:
            ptrace(PTRACE_SINGLESTEP, pid)
            if wait_trap(pid) is None:
                raise RuntimeError("child exited inside counted_run")
            steps += 1
            if regs(pid).rsp >= ret_sp:
                break
        counts.append(steps)
        poke(pid, entry, (original & ~0xFF) | 0xCC)
        ptrace(PTRACE_CONT, pid)
    out = os.read(read_fd, 1 << 20).decode()
    cases = [
        line.split("\t") for line in out.splitlines() if line.startswith("counted\t")
    ]
    if len(counts) != sum(int(c[3]) for c in cases):
        sys.exit(f"{len(counts)} calls counted for {len(cases)} cases")
    rows, i = [], 0
    for _, name, elements, runs in cases:
        steps = counts[i : i + int(runs)]
        i += int(runs)
        rows.append((name, min(steps) / int(elements)))
    level = a.isa or "machine's level"
    with open(a.out, "w") as f:
        f.write(f"| case | instructions per element ({level}) |\n|---|---:|\n")
        for name, per in rows:
            f.write(f"| {name} | {per:.2f} |\n")
    print(open(a.out).read())


if __name__ == "__main__":
    main()
