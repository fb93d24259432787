"""Suite `lfp` (marker `lfp`): the long-fat-pipe study: the ttcp instrument,
the BPF congestion controls, the lab's analysis (pure) and `linkemu lab lfp
--quick` on a real bed named "ll". Fixtures and rules are the kit's
(tests/kit, docs/testing.md)."""

from kit.bed import bed_fixtures

bed_session, bed, bed_up, run_link = bed_fixtures("ll", __file__)
