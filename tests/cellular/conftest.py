"""Suite `cellular` (marker `cellular`): the unit-latency instrument and the
4G/5G study. test_units_unit.py and test_profiles_fit.py need neither root
nor a bed (units over loopback only); test_cellular_bed.py runs `linkemu lab
cellular --quick` and `linkemu units run` on a bed named "lx". Fixtures and
rules are the kit's (tests/kit, docs/testing.md)."""

from kit.bed import bed_fixtures

bed_session, bed, bed_up, run_link = bed_fixtures("lx", __file__)
