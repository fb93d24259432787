"""Suite `forwarding` (marker `forwarding`): the kernel vs DPDK forwarding
study (issue 9 part 3). test_forwarding_unit.py needs neither root nor a bed
(the arithmetic, the published table, the report from a synthetic file);
test_forwarding_bed.py runs `linkemu lab forwarding --quick` on a bed named
"lg". Fixtures and rules are the kit's (tests/kit, docs/testing.md)."""

from kit.bed import bed_fixtures

bed_session, bed, bed_up, run_link = bed_fixtures("lg", __file__)
