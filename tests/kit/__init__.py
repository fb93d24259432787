"""The test kit every pytest suite under tests/ shares (tests/conftest.py
loads it). Import what a test needs from here:

    from kit import linkemu, cli_env, REPO       # the CLI as a user runs it
    from kit import TEST_IO, dpdk_only           # which data plane (LINKEMU_TEST_IO)
    from kit import need                         # skip here, fail under CI=true
    from kit import leftovers, conservation      # a bed's remains; a run's books
    from kit import require_quiet, require_alone, require_vcpus, on_time, CpuWatch  # quiet enough?

A suite that needs a test bed gets its fixtures in its own conftest.py:

    from kit.bed import bed_fixtures
    bed_session, bed, bed_up, run_link = bed_fixtures("xx", __file__)  # its own bed

and its test modules get that name with `BED = suite_bed(__file__)`.

See docs/testing.md for the fixtures, markers and rules.
"""

from kit.bed import Link, bed_processes, conservation, hop_problems, leftovers, suite_bed
from kit.cli import REPO, TEST_IO, cli_env, dpdk_only, linkemu
from kit.need import bed_usable, in_ci, need
from kit.quiet import (CpuWatch, on_time, other_daemons, require_alone, require_quiet, require_quiet_path,
                        require_vcpus)

__all__ = ["Link", "bed_processes", "conservation", "hop_problems", "leftovers", "suite_bed", "REPO",
           "TEST_IO", "cli_env", "dpdk_only",
           "linkemu", "bed_usable", "in_ci", "need", "CpuWatch", "on_time", "other_daemons",
           "require_alone", "require_quiet", "require_quiet_path", "require_vcpus"]
