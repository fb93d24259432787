"""Suite `faults` (marker `faults`, docs/reliability.md): faults the daemon must survive, on a
bed named "lf". The fixtures and rules are the kit's (tests/kit,
docs/testing.md); `make faults` holds /tmp/linkemu-bed-lf.lock around it."""

from kit.bed import bed_fixtures

bed_session, bed, bed_up, run_link = bed_fixtures("lf", __file__)
