"""A shared link: ?pair=&text=&strategy=… (the panel's settings), present=1, and the tab it opens (lesson=N: the
Lesson at step N; view=KEY). The browser writes it from the page's own address (SHARE_JS, tp.shareLink in
assets/page.js); the page reads it as it opens (`read`). A bad parameter is left out and named; the others are kept."""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from transformer.decoding import DecodeOptions

from playground import registry

QUERY_FIELDS = tuple(f.name for f in dataclasses.fields(DecodeOptions))  # the URL names of the decoding controls
SHARE_JS = f"(...values) => tp.shareLink({json.dumps(QUERY_FIELDS)}, {json.dumps(registry.FIRST)}, values)"


@dataclass
class Link:
    values: dict  # the page's inputs, the link's settings applied
    opened: str  # the tab it opens
    present: bool  # presentation mode
    problems: list[str]  # what was left out, and why


def read(query: dict[str, str], values: dict, panel, lesson) -> Link:
    """A link's URL parameters applied to the page's inputs (panel: the TranslatePanel; lesson: the Lesson view)."""
    values, problems = settings(query, values, panel)
    opened = registry.FIRST
    if "lesson" in query:  # the Lesson, at that step
        number, problem = lesson.number_from(query["lesson"])
        values[lesson.number], opened = number, "lesson"
        problems += [problem] if problem else []
    elif query.get("view") in registry.BY_KEY:
        opened = registry.tab_of(query["view"])
    if "view" in query and query["view"] not in registry.BY_KEY:  # said beside a lesson=N too
        problems.append(f"view={query['view']!r} is not a view of this page")
    return Link(values, opened, query.get("present", "") in ("1", "true", "yes"), problems)


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
            value = raw if name == "strategy" else float(raw)
            DecodeOptions(*(value if c is control else values[c] for c in panel.decoding))  # checks this one
            values[control] = value
        except ValueError as e:
            problems.append(f"{name}={raw!r} was left out ({e})" if "could not convert" not in str(e)
                            else f"{name}={raw!r} is not a number")
    return values, problems
