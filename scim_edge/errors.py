"""User-facing errors.

Every failure a user can cause (bad path, bad flag, corrupt file) is raised as a
`UserError`; the CLI prints its message on one line and exits with its code, never a
traceback. Library code raises these instead of printing.
"""


class UserError(Exception):
    """An error caused by input the user can fix. `str(err)` is the one-line message."""

    exit_code = 2

    def __init__(self, message: str, *, hint: str | None = None, exit_code: int = 2) -> None:
        super().__init__(message)
        self.hint = hint
        self.exit_code = exit_code

    def one_line(self) -> str:
        msg = " ".join(str(self).split())
        if self.hint:
            msg += f" ({' '.join(self.hint.split())})"
        return msg


class IndexError_(UserError):
    """Missing, unreadable or corrupt index."""


class ModelError(UserError):
    """Missing, unreadable or corrupt model."""


class DumpError(UserError):
    """A dump that cannot be read (missing, truncated, malformed, empty)."""


class ConfigError(UserError, ValueError):
    """A bad config file, environment variable or setting value."""
