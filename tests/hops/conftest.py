"""Suite `hops` (marker `hops`): chained links (`LINK >> LINK`) on a real
bed named "lp": a chain forwards, each hop counts and conserves, and the
added delay is the hops' together. Fixtures and rules are the kit's
(tests/kit, docs/testing.md)."""

from kit.bed import bed_fixtures

bed_session, bed, bed_up, run_link = bed_fixtures("lp", __file__)
