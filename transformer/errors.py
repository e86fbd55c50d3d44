"""The one exception the app shows to users as it is."""


class InputError(ValueError):
    """Bad input from a user or a caller, raised on purpose: its message is a plain sentence that says what was
    expected. The app shows it without logging; any other exception is a bug, logged with its traceback.

    It carries what it means, not only its English: the message as written (`msgid`, with {fields}) and the
    `values` that fill it, so that a page writes it in its reader's language (`said`); str() is the English."""

    def __init__(self, msgid: str, **values):
        super().__init__(msgid.format(**values) if values else msgid)
        self.msgid, self.values = msgid, values

    def said(self, _=None) -> str:
        """The message in the language of `_` (a playground.i18n.Texts; None: English as written)."""
        return _(self.msgid, **self.values) if _ is not None else str(self)
