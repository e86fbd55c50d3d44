"""bertviz's head view and model view of our encoder-decoder maps, as HTML documents.

bertviz loads require.js, d3 and jQuery from a CDN. Without the network we use jQuery and d3 from the xstatic
wheels and replace require.js with a small shim (assets/bertviz/shim.js). The app serves those three files
once, as static files of its own, and each document names them (`scripts=` their URLs); `scripts="inline"` puts
them inside the document instead (a self-contained page, e.g. to save as a file). The document goes into an
<iframe srcdoc> because gr.HTML inserts markup without running scripts.
"""
from __future__ import annotations

import html
import json
import re
from functools import cache
from pathlib import Path

from transformer.interpret.capture import AttentionMaps
from transformer.model import KINDS
from transformer.errors import InputError

from .pieces import shown

REQUIRE_TAG = re.compile(r'<script src="https://cdnjs\.cloudflare\.com/ajax/libs/require\.js/[^"]+"></script>')
SHIM = Path(__file__).resolve().parents[1] / "assets" / "bertviz" / "shim.js"  # require.js's two calls, d3 v5's name
DECIMALS = 3  # attention weights as the view draws them: 0.001 is below what its line widths can show


def script_files() -> list[Path]:
    """jQuery, d3 and the shim, in the order a document loads them."""
    import xstatic.pkg.d3 as xd3
    import xstatic.pkg.jquery as xjquery

    return [Path(xjquery.BASE_DIR) / "jquery.min.js", Path(xd3.BASE_DIR) / "d3.js", SHIM]


@cache
def _inline_scripts() -> str:
    return "".join(f"<script>\n{path.read_text(encoding='utf-8')}\n</script>\n" for path in script_files())


def _without_params_comment(document: str) -> str:
    """bertviz's script writes its data twice: `const params = {...}; // HACK: PYTHON_PARAMS is ...`, and the
    comment's marker is replaced too. Keep the statement, drop the comment (its line holds no other code)."""
    start = document.index("const params = ") + len("const params = ")
    _, end = json.JSONDecoder().raw_decode(document, start)  # json.dumps writes no raw newline
    return document[:end] + ";" + document[document.index("\n", end):]


def _safe_script_body(document: str) -> str:
    """Inside bertviz's inline script, '</' and '<!--' from token text could end the script early."""
    start = document.index('<script type="text/javascript">') + len('<script type="text/javascript">')
    end = document.rindex("</script>")
    body = document[start:end].replace("</", "<\\/").replace("<!--", "<\\!--")
    return document[:start] + body + document[end:]


def written(tokens: list[str]) -> list[str]:
    """The pieces as every view writes them (playground.pieces): no ▁, a dash before a piece inside a word."""
    return [shown(t, first=i == 0) for i, t in enumerate(tokens)]


def bertviz_document(maps: AttentionMaps, view: str = "head", scripts: str | list[str] = "inline",
                     kinds: tuple[str, ...] = KINDS) -> str:
    """A complete HTML page with bertviz's 'head' or 'model' view of encoder, decoder and cross attention (or of
    `kinds` of them: bertviz has one list of layers for all it shows, so a model whose encoder and decoder have
    different depths is drawn in two pages, the encoder's and the decoder's with cross-attention).

    scripts: "inline" puts jQuery, d3 and the shim in the page; a list of URLs (those of `script_files()`, in
    order) names them; "cdn" keeps bertviz's own require.js from its CDN.
    """
    from bertviz import head_view, model_view

    if view not in ("head", "model"):
        raise InputError(f"view must be 'head' or 'model', not {view!r}")
    # float64 rounded: bertviz writes each weight as Python prints it, 0.123 rather than 0.12300000339746475
    per_layer = {kind: [m.double().round(decimals=DECIMALS).unsqueeze(0) for m in getattr(maps, kind)]
                 if kind in kinds else None for kind in KINDS}
    draw = head_view if view == "head" else model_view
    body = draw(
        encoder_attention=per_layer["encoder"], decoder_attention=per_layer["decoder"],
        cross_attention=per_layer["cross"], encoder_tokens=written(maps.source_tokens),
        decoder_tokens=written(maps.target_tokens), html_action="return",
    ).data
    body = _safe_script_body(_without_params_comment(body))
    if scripts == "inline":
        body = _inline_scripts() + REQUIRE_TAG.sub("", body)
    elif scripts != "cdn":
        tags = "".join(f'<script src="{html.escape(url, quote=True)}"></script>' for url in scripts)
        body = tags + REQUIRE_TAG.sub("", body)
    return (f'<!doctype html><html><head><meta charset="utf-8"></head><body>{body}{FROM_ONE}{FIT}{TELL_HEIGHT}'
            '</body></html>')


# bertviz counts layers and heads from 0; the page counts from 1 (playground.pieces). Once drawn: the head view's
# layer menu and the model view's axis numbers; then, each time it is drawn, the model view's "Layer i, Head j".
FROM_ONE = """<script>(function () {
  const once = (e, text) => { e.dataset.counted = 1; e.textContent = text; };
  document.querySelectorAll('select option, svg > text').forEach(e => {  // not the pieces: they sit in groups
    if (/^\\d+$/.test(e.textContent)) once(e, String(+e.textContent + 1));
  });
  const heading = () => document.querySelectorAll('svg > text:not([data-counted])').forEach(e => {
    const m = /^Layer (\\d+), Head (\\d+)$/.exec(e.textContent);
    if (m) once(e, 'Layer ' + (+m[1] + 1) + ', Head ' + (+m[2] + 1));
  });
  new MutationObserver(heading).observe(document.body, {childList: true, subtree: true, characterData: true});
})();</script>"""


# bertviz draws at its own size (the head view about 300 px of words and lines, in a wider empty svg): the document
# zooms what it draws (its words and menus) towards the frame's width, up to twice, each time it is drawn or the
# frame resized
FIT = """<script>(function () {
  const fit = () => {
    const zoom = parseFloat(document.body.style.zoom) || 1;
    const drawn = [...document.querySelectorAll('svg text, select')].reduce((r, e) =>
      Math.max(r, e.getBoundingClientRect().right / zoom), 0);
    if (drawn > 0) document.body.style.zoom = Math.max(1, Math.min(2, (window.innerWidth - 16) / drawn));
  };
  new MutationObserver(fit).observe(document.body, {childList: true, subtree: true});
  window.addEventListener('resize', fit);
})();</script>"""


# The document tells the page its height whenever it changes (a menu choice, the model view's grid), and the page
# sizes the frame to show it whole (BertvizView's script); the sandbox lets nothing else through.
TELL_HEIGHT = ("<script>new ResizeObserver(() => parent.postMessage({bertvizHeight: "
               "document.documentElement.scrollHeight}, '*')).observe(document.body);</script>")


def iframe(document: str, height: int = 720) -> str:
    """Embed a document in a sandboxed iframe: its scripts run, but cannot reach the app's page."""
    return (f'<iframe class="bertviz-frame" sandbox="allow-scripts" style="width:100%;height:{height}px;border:0" '
            f'srcdoc="{html.escape(document, quote=True)}"></iframe>')
