"""A model someone brings (transformer.archive): a checkpoint of ours or an OPUS-MT folder, zipped or not, opens;
hostile archives are refused with a sentence, before anything is loaded, and leave nothing of theirs behind."""
from __future__ import annotations

import io
import json
import stat
import zipfile
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from transformer import Transformer, Translator, save_checkpoint
from transformer import archive
from transformer.archive import ArchiveError, open_model

from conftest import tiny_config, tiny_marian


@pytest.fixture
def ours(tmp_path, tokenizer) -> Path:
    """A checkpoint folder of this project (a tiny random model), as a recipe leaves one."""
    torch.manual_seed(0)
    save_checkpoint(tmp_path / "mine", Transformer(tiny_config(vocab_size=len(tokenizer))), tokenizer)
    return tmp_path / "mine"


def zipped(folder: Path, out: Path, top: str = "", extra: dict[str, bytes] | None = None) -> Path:
    """`folder`'s files in a zip (under `top/` when given), and `extra` {name: bytes} beside them."""
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                z.write(f, str(Path(top) / f.relative_to(folder)))
        for name, data in (extra or {}).items():
            z.writestr(name, data)
    return out


def test_a_checkpoint_of_ours_opens_from_its_folder_and_from_its_zip(ours, tmp_path):
    text = "A man walks in the park."
    want = Translator.load(ours).translate(text).text
    assert open_model(ours).translate(text).text == want
    for top in ("", "mine"):  # the files at the zip's root, or in one folder
        work = tmp_path / f"work-{top or 'root'}"
        assert open_model(zipped(ours, tmp_path / f"m{top}.zip", top), work).translate(text).text == want
        assert (work / "unpacked").is_dir()


def test_an_opus_mt_folder_is_imported_and_opens(tmp_path):
    pytest.importorskip("transformers")
    (tmp_path / "hf").mkdir()
    tiny_marian(tmp_path / "hf")
    tr = open_model(zipped(tmp_path / "hf", tmp_path / "opus.zip"), tmp_path / "work")
    assert tr.metrics.imported is not None and (tmp_path / "work" / "imported" / "model.safetensors").is_file()
    assert isinstance(tr.translate("A dog runs.").text, str)


def refused(path: Path, tmp_path: Path, says: str) -> None:
    work = tmp_path / "work"
    with pytest.raises(ArchiveError, match=says):
        open_model(path, work)
    assert not work.exists() or not any(work.iterdir())  # nothing of it stays behind


def test_hostile_archives_are_refused_with_a_sentence(ours, tmp_path, monkeypatch):
    # a pickle, even beside good weights
    refused(zipped(ours, tmp_path / "pickle.zip", extra={"pytorch_model.bin": b"\x80\x04K\x01."}), tmp_path, "pickle")
    # a path outside the folder, and a link
    refused(zipped(ours, tmp_path / "out.zip", extra={"../../evil.json": b"{}"}), tmp_path, "outside its folder")
    assert not (tmp_path.parent / "evil.json").exists()
    link = zipfile.ZipInfo("link.json")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    with zipfile.ZipFile(zipped(ours, tmp_path / "link.zip"), "a") as z:
        z.writestr(link, "/etc/passwd")
    refused(tmp_path / "link.zip", tmp_path, "a link")
    # a zip bomb: 64 MB of zeros in a few kilobytes
    with zipfile.ZipFile(tmp_path / "bomb.zip", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("config.json", b"{}")
        z.writestr("notes.txt", b"\0" * (64 * 2**20))
    refused(tmp_path / "bomb.zip", tmp_path, "zip bomb")
    # not a zip at all, and an archive too large (a sparse 2 GB file: no disk used)
    (tmp_path / "plain.zip").write_text("hello")
    refused(tmp_path / "plain.zip", tmp_path, "not a zip archive")
    with open(tmp_path / "huge.zip", "wb") as f:
        f.truncate(2 * 2**30)
    refused(tmp_path / "huge.zip", tmp_path, "more than the 600 MB")
    # headers that lie: a member larger than it says is stopped as it unpacks
    monkeypatch.setattr(archive, "MAX_UNPACKED", 2**20)
    with zipfile.ZipFile(tmp_path / "big.zip", "w", zipfile.ZIP_STORED) as z:
        z.writestr("config.json", b"{}")
        z.writestr("notes.txt", b"x" * (2 * 2**20))
    refused(tmp_path / "big.zip", tmp_path, "unpack to")


def test_weights_that_do_not_fit_the_config_are_refused_before_loading(ours, tmp_path, tokenizer):
    state = load_file(ours / "model.safetensors")
    name = next(k for k in state if k.endswith("w_q.weight"))
    state[name] = torch.zeros(state[name].size(0) + 1, state[name].size(1))
    save_file(state, ours / "model.safetensors")
    refused(zipped(ours, tmp_path / "shapes.zip"), tmp_path, f"{name} is .* but .* by config.json")
    # a config asking for a model too large to build: refused from its numbers, nothing allocated
    cfg = json.loads((ours / "config.json").read_text())
    (ours / "config.json").write_text(json.dumps(cfg | {"d_model": 8192, "d_ff": 32768, "n_heads": 8}))
    refused(ours, tmp_path, "parameters, more than")
    (ours / "config.json").write_text("{not json")
    refused(ours, tmp_path, "not a model configuration")


def test_the_zip_writer_used_here_builds_what_the_checks_read():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("a/config.json", "{}")
    with zipfile.ZipFile(buffer) as z:
        assert [archive.member_path(i) for i in z.infolist()] == [archive.PurePosixPath("a/config.json")]


@pytest.mark.parametrize("overrides", [{}, {"norm_first": True}, {"output_bias": True}, {"src_vocab_size": 24},
                                       {"n_encoder_layers": 1, "n_decoder_layers": 3, "d_ff": 48}])
def test_a_configs_parameters_are_counted_from_its_numbers_as_the_model_holds_them(overrides):
    cfg = tiny_config(**overrides)
    assert cfg.n_parameters == sum(p.numel() for p in Transformer(cfg).parameters())


@pytest.mark.parametrize("change, says", [
    ({"n_encoder_layers": 1_000_000}, "n_encoder_layers must be a whole number from 1 to 48"),
    ({"d_model": -64}, "d_model must be a whole number from 1"),
    ({"n_heads": 10**9}, "n_heads must be a whole number from 1 to 256"),
    ({"d_model": "64"}, "d_model must be a whole number"),
    ({"n_decoder_layers": 2.5}, "n_decoder_layers must be a whole number"),
    ({"max_len": 10**9}, "max_len must be a whole number"),
    ({"dropout": 7}, "dropout must be a number from 0 up to 1"),
    ({"pad_id": 10**6}, "pad_id .* must be below vocab_size"),
    ({"vocab_size": 1_000_000, "d_model": 4096, "n_heads": 8}, "parameters, more than"),
])
def test_a_config_out_of_bounds_is_refused_from_its_numbers_at_once(ours, tmp_path, monkeypatch, change, says):
    """What an uploaded config.json asks for is checked before anything is built: each number in its bounds, the
    parameters counted from the numbers; refused in a sentence, and no model made of it, not even on the meta device
    (a 20,000-layer config's was built there before it was refused: 25 s and 1.2 GB)."""
    cfg = json.loads((ours / "config.json").read_text())
    (ours / "config.json").write_text(json.dumps(cfg | change))

    def built(*args, **kwargs):
        raise AssertionError("a model was built from a config out of bounds")
    monkeypatch.setattr(archive, "Transformer", built)
    refused(zipped(ours, tmp_path / "hostile.zip"), tmp_path, says)
