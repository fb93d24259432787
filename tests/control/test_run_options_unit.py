"""`linkemu run`'s options that daemon.validate checks before the bed is
up: a bad value is a UsageError naming it, never a traceback or a refusal
from linkemud after the namespaces exist."""
import pytest

from linkemu.bed import testbed
from linkemu.daemon import daemon
from linkemu.errors import UsageError

BED = testbed.bed_for("lu")


@pytest.mark.parametrize("spin", ["²", "١٢", "-1", "1000001", "soon"])
def test_spin_us_not_ascii_digits_is_refused(spin):
    # '²' and Arabic-Indic digits pass str.isdigit(); int() takes the
    # latter but not the former.
    with pytest.raises(UsageError, match=r"bad --spin-us"):
        daemon.validate(daemon.DaemonConfig(bed=BED, wait="adaptive", spin=spin))


@pytest.mark.parametrize("spin", ["0", "120", "1000000", "auto"])
def test_spin_us_in_range_is_taken(spin):
    daemon.validate(daemon.DaemonConfig(bed=BED, wait="adaptive", spin=spin))


@pytest.mark.parametrize("seed", [-1, 2**64, 2**70])
def test_seed_beyond_64_bits_is_refused(seed):
    with pytest.raises(UsageError, match=r"--seed .* is out of range \(0 to 18446744073709551615\)"):
        daemon.validate(daemon.DaemonConfig(bed=BED, seed=seed))


def test_seed_at_the_ends_is_taken():
    for seed in (0, 2**64 - 1):
        daemon.validate(daemon.DaemonConfig(bed=BED, seed=seed))
