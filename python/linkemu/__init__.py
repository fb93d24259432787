"""linkemu: the Python half of the linkemu link emulator.

The package builds a test bed (two network namespaces joined through the
emulator over veth pairs), starts and stops the `linkemud` data plane, and
runs measurements across it. Runtime dependencies: the standard library and
the usual Linux tools (iproute2, ethtool, ping, iperf3).
"""

__version__ = "0.1.0"
