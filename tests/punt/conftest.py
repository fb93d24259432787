"""Suite `punt` (marker `punt`): punted classes (docs/punt.md) on a real
bed named "lw": a class handed to punt_echo over a FIFO pair and over
shared memory round-trips, the books hold with the process's drops and
injections, a stalled process fills its channel (punt_full), a killed one
is reported and everything else keeps forwarding. A punted class's rx is
what came back from its process, not what the port received, so classes
do not add up to the direction (classes_add_up=False); the tests check
the punt counts against the direction instead."""

from kit.bed import bed_fixtures

bed_session, bed, bed_up, run_link = bed_fixtures("lw", __file__, classes_add_up=False)
