"""Exceptions the CLI turns into exit codes.

Every failure a user can cause or fix is raised as one of these with a
message that says what failed and, where we know it, how to fix it; the CLI
prints the message without a traceback.
"""


class LinkemuError(Exception):
    """A step failed; the CLI exits 1."""

    exit_code = 1


class UsageError(LinkemuError):
    """The user asked for something invalid (bad name, bad grammar); exit 2."""

    exit_code = 2
