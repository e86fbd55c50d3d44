"""Hostile input through the API, and the security rules: no pickle, no uploads, loopback by default."""
from __future__ import annotations

import re

import gradio as gr
import pytest
from gradio_client import Client
from gradio_client.exceptions import AppError

import app

from conftest import ROOT, shipped_pairs

HOSTILE_TEXT = {
    "emoji": "A dog 🐕 plays with a ball ⚽ 👍🏽",
    "right-to-left": "A man says مرحبا بالعالم and שלום",
    "cjk": "A woman reads 日本語の本 and 中文书",
    "combining marks": "A cafe\u0301 with Z\u0351\u0308\u0301algo text",
    "zero-width and bidi": "A\u200b man\u200d rides\u202e a bike\u2066.\u2069",
    "nul and controls": "A man\x00 rides\x07 a\x1b[31m bike\x7f.",
    "punctuation only": "?!... ,;: -- ()[]{}",
    "script tag": "<script>alert(1)</script>",
    "closing script": "</script><script>alert(document.cookie)</script>",
    "img onerror": '<img src=x onerror="alert(1)">',
    "attribute breakout": "\"'><svg onload=alert(1)> ' \" `",
    "very long": "A man rides a bike down the street. " * 400,
    "one very long sentence": "a man rides a bike down the street and " * 120,
}


@pytest.fixture(scope="module")
def client(server):
    return Client(server, verbose=False)


@pytest.mark.parametrize("name", list(HOSTILE_TEXT))
def test_hostile_text_gets_a_translation(client, name):
    text, details = client.predict(HOSTILE_TEXT[name], shipped_pairs()[0], "greedy", api_name="/translate")
    assert isinstance(text, str) and details["source_tokens"][-1] == "</s>"
    assert details["truncated"] == (name == "one very long sentence")  # cut at the model's max_len
    assert (details["left_out"] > 0) == (name == "very long")  # 400 sentences: the first MAX_SENTENCES translated
    maps = client.predict(HOSTILE_TEXT[name], shipped_pairs()[0], api_name="/attention")  # the first sentence's
    assert maps["source_tokens"] == details["source_tokens"] and maps["sentence"] == details["sentence"]
    assert maps["sentences"] == len(details["sentences"]) + details["left_out"]


def test_a_lone_surrogate_sent_as_a_json_escape_is_translated(server):
    """gradio_client cannot even encode one; a raw JSON body with "\\ud800" can, so send that."""
    import json

    import httpx

    inputs = ["A man \ud800 rides a bike.", shipped_pairs()[0], "greedy", 1.0, 0, 1.0, 0, 4, 1.0, 0, "", True]
    body = json.dumps({"data": inputs}, ensure_ascii=True)
    assert "\\ud800" in body
    r = httpx.post(f"{server}gradio_api/call/translate", content=body, headers={"Content-Type": "application/json"})
    stream = httpx.get(f"{server}gradio_api/call/translate/{r.json()['event_id']}", timeout=60).text
    assert "event: complete" in stream, stream[:500]
    [(text, details)] = json.loads(stream.split("data:", 1)[1].strip().splitlines()[0])
    assert isinstance(text, str) and "?" in details["source_tokens"]  # the surrogate became a question mark


def test_attention_of_a_callers_own_translation(client):
    text = "A man rides a bike."
    mine = client.predict(text, shipped_pairs()[0], "Ein Mann <script>alert(1)</script> fährt.", api_name="/attention")
    assert mine["target_tokens"][0] == "<s>" and "▁Mann" in mine["target_tokens"]
    assert len(mine["cross"][0][0]) == len(mine["target_tokens"])  # one row per token of the given translation
    huge = client.predict(text, shipped_pairs()[0], "Ein Mann fährt. " * 330_000, api_name="/attention")  # 5 MB
    assert len(huge["target_tokens"]) == 256  # cut to the model's 256 positions, not refused, not a crash
    with pytest.raises(Exception, match="must be a string") as e:
        client.predict(text, shipped_pairs()[0], 42, api_name="/attention")
    assert "Traceback" not in str(e.value)


@pytest.mark.parametrize("text", ["", "   \t\n  ", "\x00\x00", "\u200b\u200b"])
def test_empty_text_gets_a_plain_message(client, text):
    with pytest.raises(Exception, match="no text to translate") as e:
        client.predict(text, api_name="/translate")
    assert "Traceback" not in str(e.value)


BAD_PARAMETERS = [
    ({"temperature": -1.0}, "temperature must be"),
    ({"temperature": 1e9}, "temperature must be"),
    ({"top_p": 0.0}, "top_p must be"),
    ({"top_p": 1.5}, "top_p must be"),
    ({"top_k": -5}, "top_k must be"),
    ({"beam_size": 0}, "beam_size must be"),
    ({"beam_size": 1000}, "beam_size must be"),
    ({"max_len": 10**6}, "max_len must be"),
    ({"pair": "xx-yy"}, "unknown language pair"),
    ({"strategy": "telepathy"}, "unknown strategy"),
    ({"ablate": "cross:99:0"}, "no head cross:99:0"),
    ({"ablate": "everything"}, "kind:layer:head"),
]


@pytest.mark.parametrize("kwargs, message", BAD_PARAMETERS, ids=[str(k) for k, _ in BAD_PARAMETERS])
def test_out_of_range_parameters_get_a_plain_message(client, kwargs, message):
    with pytest.raises(Exception, match=re.escape(message)) as e:
        client.predict("A man rides a bike.", api_name="/translate", **kwargs)
    assert "Traceback" not in str(e.value)


@pytest.mark.parametrize("kwargs, message", [({"temperature": "hot"}, "temperature must be a number"),
                                             ({"beam_size": [1, 2]}, "beam_size must be a whole number"),
                                             ({"seed": None}, "seed must be a whole number"),
                                             ({"ablate": 5}, "ablate lists heads as text")])
def test_wrong_types_never_crash_the_server(client, kwargs, message):
    with pytest.raises(AppError, match=message) as e:
        client.predict("A man rides a bike.", api_name="/translate", **kwargs)
    assert "Traceback" not in str(e.value)
    assert client.predict("A man rides a bike.", api_name="/translate")[0]  # still serving


PICKLE = re.compile(r"\bimport pickle\b|\bpickle\.|torch\.load\(|\bjoblib\b|\bdill\b")


def test_no_pickle_anywhere_in_the_code():
    sources = [p for folder in ("transformer", "playground", "tools", "benchmarks") for p in (ROOT / folder).rglob("*.py")]
    sources.append(ROOT / "app.py")
    assert {"app.py", "maps.py", "common.py", "greedy_latency.py", "train.py"} <= {p.name for p in sources}
    assert PICKLE.search("state = torch.load(path)") and PICKLE.search("import pickle")  # the scan can fail
    for path in sources:
        assert not PICKLE.search(path.read_text()), path.relative_to(ROOT)


def test_one_upload_a_zip_and_no_user_paths(translators):
    """The one upload is the Model card's "Bring your own model" (a .zip, checked by transformer.archive), built with
    the card for each visitor who opens it; every other event takes text, a number or a choice, never a path."""
    page = app.build_page(translators)
    uploads = (gr.File, gr.UploadButton, gr.Image, gr.Audio, gr.Video, gr.Gallery, gr.Model3D, gr.MultimodalTextbox)
    assert not [b for b in page.demo.blocks.values() if isinstance(b, uploads)]  # none on the page itself
    found = [c for view in page.views.values() for c in view.parts.values() if isinstance(c, uploads)]
    bring = page.views["card"].bring
    assert found == [bring] and bring.file_types == [".zip"] and bring.file_count == "single"
    for dep in page.demo.fns.values():
        for block in dep.inputs:
            assert not isinstance(block, (gr.File, gr.DownloadButton)), (dep.name, block)


def test_the_server_sends_no_file_that_a_caller_names(server):
    """Only the app's own download files are served: a path asked for in the URL is refused."""
    import httpx

    for path in ["/etc/passwd", str(ROOT / "app.py"), str(ROOT / "checkpoints" / shipped_pairs()[0] / "spm.model")]:
        r = httpx.get(f"{server}gradio_api/file={path}", timeout=30)
        assert r.status_code in (403, 404), (path, r.status_code)
        assert b"root:" not in r.content


def test_binds_to_loopback_unless_told_or_on_a_space(monkeypatch):
    monkeypatch.delenv("SPACE_ID", raising=False)
    assert app.parse_args([]).host == "127.0.0.1"
    assert app.parse_args(["--host", "0.0.0.0"]).host == "0.0.0.0"
    monkeypatch.setenv("SPACE_ID", "someone/transformer-playground")
    assert app.parse_args([]).host == "0.0.0.0"


def test_on_zerogpu_auto_means_the_cpu_and_an_explicit_choice_stays(monkeypatch):
    monkeypatch.delenv("SPACES_ZERO_GPU", raising=False)
    assert app.serving_device("auto") == "auto"
    monkeypatch.setenv("SPACES_ZERO_GPU", "true")
    assert app.serving_device("auto") == "cpu" and app.serving_device("cuda") == "cuda"
