"""A page's pass: a signed cookie that the page's HTML (GET /) gives each browser, so that a join can tell a student
who opened the page from a script that posts to the join event alone. A join without a valid pass still gets in (a
phone whose browser keeps no cookie in a Space's frame must not be locked out), marked in the teacher's list, where
every marked join goes out in one click. Signed with the key every replica shares (Store.browser_secret), so any
replica checks a pass another one gave. No gradio here.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets

from starlette.requests import Request

from ..i18n import asks_for_the_page

COOKIE = "tp-pass"
DAY_S = 24 * 3600


def signed(secret: str, name: str) -> str:
    return hmac.new(secret.encode(), name.encode(), hashlib.sha256).hexdigest()[:32]


def issued(secret: str) -> str:
    """A new pass: a random name and its signature."""
    name = secrets.token_urlsafe(12)
    return f"{name}.{signed(secret, name)}"


def valid(secret: str, value: str | None) -> bool:
    """True for a pass this playground gave (any replica)."""
    name, _, signature = (value or "").partition(".")
    return bool(name) and hmac.compare_digest(signature, signed(secret, name))


def has_pass(request, secret: str) -> bool:
    """Whether a request (a gr.Request, a starlette Request) carries a valid pass."""
    return valid(secret, (getattr(request, "cookies", None) or {}).get(COOKIE))


class PagePass:
    """ASGI middleware: the page's HTML (GET /) sets a pass on a browser that has no valid one. Added outside the
    middleware that keeps the page's HTML for every visitor (playground.page.SamePage), so the kept page stays one."""

    def __init__(self, app, secret: str):
        self.app, self.secret = app, secret

    async def __call__(self, scope, receive, send):
        if not asks_for_the_page(scope) or valid(self.secret, Request(scope).cookies.get(COOKIE)):
            return await self.app(scope, receive, send)
        cookie = f"{COOKIE}={issued(self.secret)}; Path=/; Max-Age={DAY_S}; HttpOnly; SameSite=Lax".encode()

        async def passed(message):
            if message["type"] == "http.response.start":
                message = message | {"headers": [*message.get("headers", []), (b"set-cookie", cookie)]}
            await send(message)

        return await self.app(scope, receive, passed)
