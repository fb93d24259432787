"""linkemu: the Python half of the linkemu link emulator.

The package builds a test bed (two network namespaces joined through the
emulator over veth pairs), starts and stops the `linkemud` data plane, and
runs measurements across it. Runtime dependencies: the standard library and
the usual Linux tools (iproute2, ethtool, ping, iperf3).
"""

__version__ = "0.1.0"

# The API (docs/python.md), imported on first use so that `import linkemu`
# stays cheap for the command line.
_API = {
    "Bed": "linkemu.api", "Link": "linkemu.api", "ExecTimeout": "linkemu.api",
    "Stats": "linkemu.daemon.counters", "FinalReport": "linkemu.daemon.counters",
    "DirectionCounters": "linkemu.daemon.counters", "ClassCounters": "linkemu.daemon.counters",
    "ErrorSummary": "linkemu.daemon.counters",
    "LinkemuError": "linkemu.errors", "UsageError": "linkemu.errors",
    "DaemonStartError": "linkemu.daemon.daemon",
    "ControlError": "linkemu.daemon.control", "DaemonRefused": "linkemu.daemon.control",
}
__all__ = ["__version__", *_API]


def __getattr__(name: str):
    if name in _API:
        import importlib
        return getattr(importlib.import_module(_API[name]), name)
    raise AttributeError(f"module 'linkemu' has no attribute {name!r}")
