"""Suite `control` (marker `control`): ctl, stats --watch, capture and
scenarios. Unit tests (no root, no DPDK) run the client against a fake
control server (fakedaemon.py); live tests (marker `live`) use a real bed
named "lc". The fixtures and rules are the kit's (tests/kit,
docs/testing.md)."""

from kit.bed import bed_fixtures

bed_session, bed, bed_up, run_link = bed_fixtures("lc", __file__)
