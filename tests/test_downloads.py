"""Every download of the page: one writer, one pruning rule, one folder removed at exit."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest


from conftest import ROOT


def test_every_download_goes_through_one_writer_that_prunes_old_files_of_any_kind(tmp_path, translator):
    import json

    from playground import context, downloads
    from transformer.decoding import DecodeOptions

    result = context.run(translator, "toy", "A dog runs.", DecodeOptions(max_len=6))
    first = downloads.write(tmp_path, "attention", downloads.attention_payload(result.maps))
    assert json.loads(first.read_text())["source_tokens"] == result.maps.source_tokens
    picture = tmp_path / "figure.png"
    picture.write_bytes(b"png")
    for old in (first, picture):
        os.utime(old, (0, 0))  # written in 1970: older than an hour
    second = downloads.write(tmp_path, "attention-rollout", {"rollout": []})
    assert not first.exists() and not picture.exists() and second.exists()
    # Another request removes a file between this one's listing and its look at it: this one still writes
    gone = tmp_path / "attention-gone.json"
    listing = lambda folder, pattern: iter([gone, second])
    with pytest.MonkeyPatch.context() as m:
        m.setattr(type(tmp_path), "glob", listing)
        third = downloads.write(tmp_path, "what-the-model-used", {})
    assert third.exists() and second.exists()


@pytest.mark.slow
def test_the_download_folder_is_removed_when_the_server_exits(tmp_path, translator):
    from transformer import save_checkpoint

    save_checkpoint(tmp_path / "en-de", translator.model, translator.tokenizer)
    code = ("import sys, app; translators, _ = app.load_translators(__import__('pathlib').Path(sys.argv[1]), 'cpu'); "
            "page = app.build_page(translators); print(page.ctx.downloads); assert page.ctx.downloads.is_dir()")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    folder = out.stdout.strip().splitlines()[-1]
    assert "transformer-playground-" in folder and not os.path.exists(folder)
