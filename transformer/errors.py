"""The one exception the app shows to users as it is."""


class InputError(ValueError):
    """Bad input from a user or a caller, raised on purpose: its message is a plain sentence that says what was
    expected. The app shows it without logging; any other exception is a bug, logged with its traceback."""
