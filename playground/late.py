"""Late answers, dropped: each session's newest translate request, so that an answer the user no longer waits for
sends nothing. It covers races between listeners (a translation and a tab's drawing) that gradio's trigger_mode,
which orders the events of one listener, does not."""
from __future__ import annotations

import itertools
from collections import OrderedDict

TICKETS = itertools.count(1)  # every translate request's number, for every session


class Newest:
    def __init__(self, sessions: int = 10_000):
        self.sessions = sessions  # kept at most: the oldest are sessions long gone
        self.requests: OrderedDict = OrderedDict()  # session -> (its newest translate request, its result's key)

    def asked(self, request) -> int | None:
        """A new translate request of this user's session: its number (None outside a browser session)."""
        session = getattr(request, "session_hash", None)
        if session is None:
            return None
        ticket = next(TICKETS)
        self.requests[session] = (ticket, None)
        self.requests.move_to_end(session)
        while len(self.requests) > self.sessions:
            self.requests.popitem(last=False)
        return ticket

    def landed(self, request, ticket: int | None, key: str) -> None:
        """Request `ticket` is answered with the result `key`: views drawn from another result are now late."""
        if ticket is not None:
            self.requests[request.session_hash] = (ticket, key)

    def stale(self, request, ticket: int | None = None, key: str | None = None) -> bool:
        """True for an answer the user no longer waits for: a translation after which a newer one was asked for,
        or a view drawn from another translation than the session's newest finished one."""
        session = getattr(request, "session_hash", None)
        if session is None or session not in self.requests:
            return False
        newest_ticket, newest_key = self.requests[session]
        if ticket is not None:
            return ticket != newest_ticket
        return key is not None and newest_key is not None and key != newest_key
