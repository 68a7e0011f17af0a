"""User-facing errors: one clear line, no traceback."""


class UserError(Exception):
    """A mistake in the user's input (command line, config, strategy file).

    The message is a single line naming what is wrong and what is allowed; the
    command exits with code 2.
    """

    exit_code = 2


class EnvironmentFailure(UserError):
    """The machine cannot do what was asked (a read-only folder, no memory): one
    line, exit code 1."""

    exit_code = 1
