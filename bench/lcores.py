"""The CPUs a benchmark's programs run on, from the one --lcore it was given.

linkemud and holdfwd forward on the one lcore of their `-l`. testpmd
forwards on every lcore of its `-l` except its main one, which EAL makes
the lowest unless told otherwise: `-l 0,L` forwards on L only for L > 0,
and for L = 0 the benchmarks wrote `-l 0-1`, so testpmd forwarded on CPU 1
while linkemud and holdfwd forwarded on CPU 0, and the ratios set two
different CPUs against each other. testpmd_lcores() names the main lcore
(--main-lcore: another CPU, where testpmd's prompt sleeps), so testpmd
forwards on the lcore asked for whatever its number."""
import os


def usable_cpus():
    """The CPUs this process (and so what it starts) may run on."""
    return sorted(os.sched_getaffinity(0))


def other_cpu(lcore, cpus=None):
    """The lowest usable CPU that is not `lcore`: for what runs beside the
    forwarding lcore (testpmd's main lcore, a paced source)."""
    others = [c for c in (usable_cpus() if cpus is None else cpus) if c != lcore]
    if not others:
        raise ValueError(f"no CPU other than {lcore} to run beside the forwarding lcore")
    return others[0]


def testpmd_lcores(lcore, cpus=None):
    """testpmd's EAL lcore words that make it forward on `lcore` alone."""
    main = other_cpu(lcore, cpus)
    return ["-l", f"{min(main, lcore)},{max(main, lcore)}", "--main-lcore", str(main)]


def lcore_problem(lcore, cpus=None):
    """Why `lcore` cannot be the forwarding lcore (None when it can): a CPU
    this process may not use, or the only one (testpmd's main lcore and
    the tools need another)."""
    cpus = usable_cpus() if cpus is None else cpus
    if lcore not in cpus:
        return f"--lcore {lcore}: not a CPU this benchmark may run on (usable: {', '.join(map(str, cpus))})"
    if len(cpus) < 2:
        return f"--lcore {lcore}: the only usable CPU; the benchmark needs another beside it"
    return None
