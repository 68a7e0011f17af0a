"""User-facing errors: one clear line, exit code 2, no traceback."""


class UserError(Exception):
    """A mistake in the user's input (command line, config, strategy file).

    The message is a single line naming what is wrong and what is allowed.
    """
