"""Suite `bed` (marker `bed`): the test bed, the command line, the demo and
the basic link on a real bed named "lt" (namespaces, veths, linkemud).
The fixtures and rules are the kit's (tests/kit, docs/testing.md)."""

from kit.bed import bed_fixtures

bed_session, bed, bed_up, run_link = bed_fixtures("lt", __file__)
