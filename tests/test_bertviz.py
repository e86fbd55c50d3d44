"""bertviz's head and model views as the page serves them: inline, from its CDN, or from the app's copies."""
from __future__ import annotations

import html

import torch

from playground.bertviz_view import FROM_ONE, bertviz_document, iframe
from transformer.interpret.capture import AttentionMaps


def maps_with(tokens: list[str]) -> AttentionMaps:
    S, T = len(tokens), 3
    soft = lambda *shape: torch.rand(*shape).softmax(-1)
    return AttentionMaps(soft(2, 4, S, S), soft(2, 4, T, T).tril(), soft(2, 4, T, S), tokens, ["<s>", "▁ein", "▁b"])


def test_inline_bertviz_holds_its_scripts_and_keeps_tokens_inside_the_script():
    doc = bertviz_document(maps_with(["▁A", "</script><script>alert(1)</script>", "<!--", "</s>"]), "head")
    assert "require.min.js" not in doc and "window.requirejs" in doc and "d3.schemeCategory10 =" in doc
    body = doc[doc.index('<script type="text/javascript">'):doc.index(FROM_ONE)]  # then ours: counting from 1, the size
    assert body.count("</script>") == 1  # only the real end of bertviz's script: token text cannot close it
    assert "<\\/script><script>alert(1)<\\/script>" in body and "<\\!--" in body
    framed = iframe(doc)
    assert framed.startswith('<iframe class="bertviz-frame" sandbox="allow-scripts"')
    assert html.unescape(framed.split('srcdoc="', 1)[1].rsplit('"', 1)[0]) == doc  # attribute-escaped exactly


def test_bertviz_cdn_path_is_bertviz_own_page():
    doc = bertviz_document(maps_with(["▁A", "▁dog", "</s>"]), "model", scripts="cdn")
    assert 'src="https://cdnjs.cloudflare.com/ajax/libs/require.js/' in doc and "window.requirejs" not in doc


def test_bertviz_names_the_apps_script_files_and_sends_rounded_weights():
    import re

    from playground.bertviz_view import script_files

    urls = [f"gradio_api/file={p}" for p in script_files()]
    assert [p.name for p in script_files()] == ["jquery.min.js", "d3.js", "shim.js"]
    assert all(p.is_file() for p in script_files())
    maps = maps_with(["▁A", "▁dog", "</s>"])
    doc = bertviz_document(maps, "head", scripts=urls)
    tags = [doc.index(f'<script src="{u}"></script>') for u in urls]
    assert tags == sorted(tags) and "window.requirejs" not in doc  # named, in order, not inlined
    assert '<script src="https://' not in doc  # nothing from the network (require.config's paths go unused)
    assert doc.count('"attention": [') == 1  # bertviz's data once (its script carried a second copy in a comment)
    numbers = re.findall(r"\b0\.(\d+)", doc[doc.index('"attention"'):])
    assert numbers and max(len(n) for n in numbers) <= 3
    assert len(doc) < len(bertviz_document(maps, "head")) / 10  # the scripts are the bulk of an inlined page
