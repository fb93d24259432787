"""Suite `sanitize` (marker `sanitize`, docs/reliability.md): linkemud itself under ASan+UBSan, on a
bed named "lz". The fixtures and rules are the kit's (tests/kit,
docs/testing.md); `make sanitize` holds /tmp/linkemu-bed-lz.lock around it."""

from kit.bed import bed_fixtures

# The test makes live sets: the report's classes are then the last path's
# only and need not add up to the direction (whose books are checked).
bed_session, bed, bed_up, run_link = bed_fixtures("lz", __file__, classes_add_up=False)
