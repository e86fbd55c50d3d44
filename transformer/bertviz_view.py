"""bertviz's head view and model view of our encoder-decoder maps, as self-contained HTML documents.

bertviz loads require.js, d3 and jQuery from a CDN. Offline (the default) we inline d3 and jQuery from
the xstatic wheels and replace require.js with a small shim, so the view draws with no network. The
document goes into an <iframe srcdoc> because gr.HTML inserts markup without running scripts.
"""
from __future__ import annotations

import html
import re
from functools import cache
from pathlib import Path

from .capture import AttentionMaps
from .errors import InputError

REQUIRE_TAG = re.compile(r'<script src="https://cdnjs\.cloudflare\.com/ajax/libs/require\.js/[^"]+"></script>')

# What bertviz's code expects from require.js: require.config(...) and requirejs([names], callback).
REQUIRE_SHIM = """
window.require = {config: function () {}};
window.requirejs = function (names, callback) {
  var modules = {jquery: window.jQuery, d3: window.d3};
  callback.apply(null, names.map(function (name) { return modules[name]; }));
};
"""
# xstatic ships d3 v3; bertviz was written for d3 v5. The one v5 name it uses is d3.schemeCategory10.
D3_BRIDGE = "if (!d3.schemeCategory10) { d3.schemeCategory10 = d3.scale.category10().range(); }"


@cache
def _offline_scripts() -> str:
    import xstatic.pkg.d3 as xd3
    import xstatic.pkg.jquery as xjquery

    jquery = (Path(xjquery.BASE_DIR) / "jquery.min.js").read_text(encoding="utf-8")
    d3 = (Path(xd3.BASE_DIR) / "d3.js").read_text(encoding="utf-8")
    return "".join(f"<script>\n{code}\n</script>\n" for code in (jquery, d3, D3_BRIDGE, REQUIRE_SHIM))


def _safe_script_body(document: str) -> str:
    """Inside bertviz's inline script, '</' and '<!--' from token text could end the script early."""
    start = document.index('<script type="text/javascript">') + len('<script type="text/javascript">')
    end = document.rindex("</script>")
    body = document[start:end].replace("</", "<\\/").replace("<!--", "<\\!--")
    return document[:start] + body + document[end:]


def bertviz_document(maps: AttentionMaps, view: str = "head", offline: bool = True) -> str:
    """A complete HTML page with bertviz's 'head' or 'model' view of encoder, decoder and cross attention."""
    from bertviz import head_view, model_view

    if view not in ("head", "model"):
        raise InputError(f"view must be 'head' or 'model', not {view!r}")
    per_layer = {kind: [m.unsqueeze(0) for m in getattr(maps, kind)] for kind in ("encoder", "decoder", "cross")}
    draw = head_view if view == "head" else model_view
    body = draw(
        encoder_attention=per_layer["encoder"], decoder_attention=per_layer["decoder"],
        cross_attention=per_layer["cross"], encoder_tokens=list(maps.source_tokens),
        decoder_tokens=list(maps.target_tokens), html_action="return",
    ).data
    body = _safe_script_body(body)
    if offline:
        body = _offline_scripts() + REQUIRE_TAG.sub("", body)
    return f'<!doctype html><html><head><meta charset="utf-8"></head><body>{body}</body></html>'


def iframe(document: str, height: int = 720) -> str:
    """Embed a document in a sandboxed iframe: its scripts run, but cannot reach the app's page."""
    return (f'<iframe class="bertviz-frame" sandbox="allow-scripts" style="width:100%;height:{height}px;border:0" '
            f'srcdoc="{html.escape(document, quote=True)}"></iframe>')
