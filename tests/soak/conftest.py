"""Suite `soak` (marker `soak`, docs/reliability.md): the soak: traffic, live sets and checks for SOAK_SECONDS, on a
bed named "ls". The fixtures and rules are the kit's (tests/kit,
docs/testing.md); `make soak` holds /tmp/linkemu-bed-ls.lock around it."""

from kit.bed import bed_fixtures

# After live sets the report's classes are those of the last path only, so
# they need not add up to the direction's totals; the direction's books are
# checked every second and at the stop.
bed_session, bed, bed_up, run_link = bed_fixtures("ls", __file__, classes_add_up=False)
