"""Suite `lab` (marker `lab`): the lab's statistics (pure), its C
instruments, and the --quick experiments on a real bed named "lb". The
fixtures and rules are the kit's (tests/kit, docs/testing.md)."""

from kit.bed import bed_fixtures

bed_session, bed, bed_up, run_link = bed_fixtures("lb", __file__)
