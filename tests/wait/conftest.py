"""Suite `wait` (marker `wait`): linkemud's waiting modes (--wait busy |
adaptive, docs/performance.md "Waiting") on a real bed named "li": an
adaptive lcore forwards, conserves, wakes on frames and gives its CPU back
at idle. Fixtures and rules are the kit's (tests/kit, docs/testing.md)."""

from kit.bed import bed_fixtures

bed_session, bed, bed_up, run_link = bed_fixtures("li", __file__)
