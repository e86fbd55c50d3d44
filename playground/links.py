"""A shared link: ?pair=&text=&strategy=… (the panel's settings), present=1, and the tab it opens (lesson=N: the
Lesson at step N; view=KEY). The server writes it (`write`) on the page's own address, which the browser gives it
(ADDRESS_JS: right behind any proxy, offline too); the page reads it as it opens (`read`). A bad parameter is left
out and named; the others are kept."""
from __future__ import annotations

import dataclasses
import socket
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit, urlunsplit

from transformer.decoding import DecodeOptions

from playground import registry

QUERY_FIELDS = tuple(f.name for f in dataclasses.fields(DecodeOptions))  # the URL names of the decoding controls
ADDRESS_JS = "() => window.location.href"  # into the link's box, for the server to write the link on


@dataclass
class Link:
    values: dict  # the page's inputs, the link's settings applied
    tab: str  # the tab it opens
    present: bool  # presentation mode
    problems: list[str]  # what was left out, and why
    sentence: int | None = None  # which of the text's sentences the views show (from 0), when the link says
    step: int | None = None  # the Lesson's step it opens, when it opens the Lesson


def read(query: dict[str, str], values: dict, panel, lesson) -> Link:
    """A link's URL parameters applied to the page's inputs (panel: the TranslatePanel; lesson: the Lesson view)."""
    values, problems = settings(query, values, panel)
    tab, step = registry.FIRST, None
    if "lesson" in query:  # the Lesson, at that step
        step, problem = lesson.number_from(query["lesson"])
        tab = "lesson"
        problems += [problem] if problem else []
    elif query.get("view") in registry.BY_KEY:
        tab = registry.tab_of(query["view"])
    if "view" in query and query["view"] not in registry.BY_KEY:  # said beside a lesson=N too
        problems.append(f"view={query['view']!r} is not a view of this page")
    sentence = None
    if "sentence" in query:  # counted from 1 in a link, as the menu under the translation counts
        raw = query["sentence"]
        if raw.strip().isdecimal() and int(raw) >= 1:  # not isdigit: "²" is a digit int() refuses
            sentence = int(raw) - 1
        else:
            problems.append(f"sentence={raw!r} was left out (a sentence's number in the text: 1, 2, ...)")
    return Link(values, tab, query.get("present", "") in ("1", "true", "yes"), problems, sentence, step)


LOOPBACK = ("127.", "localhost", "[::1]", "::1", "0.0.0.0")


def network_address(port: int) -> str | None:
    """http://ADDRESS:port/ with this machine's IPv4 address on its network (the first interface that is up, not
    the loopback and not link-local): what a class's phones on the same network open. None without one."""
    import psutil

    up = {name for name, stats in psutil.net_if_stats().items() if stats.isup}
    for name, addresses in psutil.net_if_addrs().items():
        for a in addresses:
            if name in up and a.family == socket.AF_INET and not a.address.startswith(("127.", "169.254.")):
                return f"http://{a.address}:{port}/"
    return None


def shared_address(address: str, public: str | None) -> str:
    """The address a link is written on: the page's own (`address`, the browser's), or `public` (--public-url, or
    this machine's network address when the app listens there) where the page was opened on this machine's
    loopback, an address no other machine can open."""
    host = urlsplit(address or "").hostname or ""
    return public if public and (not host or host.startswith(LOOPBACK) or host == "::1") else address


def write(address: str, values: dict, panel, tab: str, step: int, public: str | None = None) -> str:
    """The link to this page (`address`, its query and fragment dropped; `shared_address`) with the panel's
    settings, presentation mode, the sentence the views show (of several) and the open view (the Lesson at its
    step)."""
    address = shared_address(address, public)
    query = {"pair": values[panel.pair], "text": values[panel.text]}
    query |= {name: int(v) if isinstance(v := values[control], bool) else v  # a switch: 1 or 0
              for name, control in zip(QUERY_FIELDS, panel.decoding)}
    query |= {"present": "1"} if values[panel.present] else {}
    query |= {"sentence": which + 1} if isinstance(which := values.get(panel.which), int) and which > 0 else {}
    if tab == "lesson":
        query["lesson"] = int(step or 1)
    elif tab != registry.FIRST:
        query["view"] = tab
    scheme, host, path, _, _ = urlsplit(address or "")
    return urlunsplit((scheme, host, path, urlencode(query), ""))


SWITCHES = {f.name for f in dataclasses.fields(DecodeOptions) if f.type in (bool, "bool")}  # stutter_guard


def switch(name: str, raw: str) -> bool:
    """A link's on or off: 1 / true / on, or 0 / false / off."""
    word = raw.strip().lower()
    if word not in ("1", "true", "on", "0", "false", "off"):
        raise ValueError(f"{name} must be 1 or 0, for on or off; got {raw!r}")
    return word in ("1", "true", "on")


def settings(query: dict[str, str], values: dict, panel) -> tuple[dict, list[str]]:
    """The panel's controls with the link's pair, text and decoding settings applied, and the problems found."""
    values, problems = dict(values), []
    pair = query.get("pair")
    if pair is not None:
        if pair in panel.ctx.pairs:
            values[panel.pair] = pair
        else:
            problems.append(f"pair {pair!r} is not loaded here")
    if "text" in query:
        values[panel.text] = query["text"][: panel.text.max_length]
    for name, control in zip(QUERY_FIELDS, panel.decoding):
        if name not in query:
            continue
        raw = query[name]
        try:
            value = raw if name == "strategy" else switch(name, raw) if name in SWITCHES else float(raw)
            DecodeOptions(*(value if c is control else values[c] for c in panel.decoding))  # checks this one
            values[control] = value
        except ValueError as e:
            problems.append(f"{name}={raw!r} was left out ({e})" if "could not convert" not in str(e)
                            else f"{name}={raw!r} is not a number")
    return values, problems


def wire_links(page, event, views) -> None:
    """The links of `views` (the page's, or those built for a visitor) open their view."""
    for link in (link for view in views for link in view.links):
        event(link.open, page.show_part, [], draws=page.tabs.components | {page.tabs.signal},
              show_progress="hidden")


def wire(page, event) -> None:
    """The page's links: a glance box or the Lesson's "go deeper" (a gr.HTML's own `open` event) selects its view's
    tabs and signals the tab to draw; "Link to this" writes the shareable link."""
    wire_links(page, event, page.on_page.values())
    panel = page.panel
    for share in (panel.share, panel.present_share):
        addressed = share.click(None, None, panel.link, js=ADDRESS_JS)  # in the browser: no event on the server
        event(addressed.then, page.share, [], [panel.link, panel.text, panel.present, panel.which, *panel.decoding],
              [panel.link], show_progress="hidden")
