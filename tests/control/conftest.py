"""Suite `control` (marker `control`): ctl, stats --watch, capture and
scenarios. Unit tests (no root, no DPDK) run the client against a fake
control server (fakedaemon.py); live tests (marker `live`) use a real bed
named "lc". The fixtures and rules are the kit's (tests/kit,
docs/testing.md)."""

from kit.bed import bed_fixtures

# Live `set`s replace the model and its classes during a run, so a run's
# classes need not add up to the direction's totals (issue 13, item 7).
bed_session, bed, bed_up, run_link = bed_fixtures("lc", __file__, classes_add_up=False)
