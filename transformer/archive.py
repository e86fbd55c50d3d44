"""A model someone brings: a zip archive or a folder, either a checkpoint of this project (what a recipe writes) or a
Marian/OPUS-MT folder (what `MarianMTModel.save_pretrained` writes), checked before anything is loaded.

    from transformer.archive import open_model
    tr = open_model("my-model.zip", work="unpacked/")      # or a folder: open_model("runs/smoke")

The checks, each refused with a sentence that says why: a zip at most MAX_ARCHIVE bytes, unpacking to at most
MAX_UNPACKED (counted as it unpacks, whatever the archive's headers claim), every path inside the folder (no absolute
path, no "..", no link), only the files a checkpoint holds (JSON, safetensors, sentencepiece models, text: a pickle is
never opened), a config whose model has at most MAX_PARAMETERS parameters, and weights whose names and shapes are the
ones that config builds, read from the safetensors header before a tensor is loaded.
"""
from __future__ import annotations

import json
import shutil
import stat
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

import torch
from safetensors import safe_open

from .checkpoint import CONFIG
from .config import ModelConfig
from .errors import InputError
from .model import Transformer
from .translator import Translator

MAX_ARCHIVE = 600 * 2**20  # an OPUS-MT model's zip is about 300 MB
MAX_UNPACKED = 1024 * 2**20
MAX_RATIO = 200  # unpacked / packed, per file of more than a megabyte: weights pack to about their size
MAX_PARAMETERS = 150_000_000  # OPUS-MT's are about 74 million
WEIGHTS = "model.safetensors"
KEPT = (".json", ".safetensors", ".model", ".spm", ".md", ".txt", ".vocab")  # what a checkpoint folder holds
PICKLES = (".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt", ".npy", ".npz", ".h5", ".msgpack")  # and the like


class ArchiveError(InputError):
    """A model that is refused: the message says which check and what to do."""


def megabytes(n: int) -> str:
    return f"{n / 2**20:,.0f} MB"


def member_path(info: zipfile.ZipInfo) -> PurePosixPath | None:
    """Where a member unpacks, inside the folder; None for a folder entry. ArchiveError for a path outside it, a
    link, or a file no checkpoint holds."""
    name = info.filename
    path = PurePosixPath(name)
    if name.startswith(("/", "\\")) or "\\" in name or ":" in name or ".." in path.parts:
        raise ArchiveError(f"the archive names a path outside its folder ({name!r}): refused")
    if stat.S_ISLNK(info.external_attr >> 16):
        raise ArchiveError(f"the archive holds a link ({name!r}): refused")
    if info.is_dir():
        return None
    if path.suffix.lower() in PICKLES:
        raise ArchiveError(f"{name} is a pickle (or another format that runs code when opened), which is never "
                           "opened here: the weights must be model.safetensors")
    if path.suffix.lower() not in KEPT:
        raise ArchiveError(f"{name} is not a file a model folder holds (JSON, safetensors, sentencepiece models, "
                           "text): refused")
    return path


def unpack(archive: str | Path, dest: str | Path) -> Path:
    """Unpack a model's zip into `dest` after checking it (module docstring); returns the folder holding its
    config.json (the archive's root, or its one top folder)."""
    archive, dest = Path(archive), Path(dest)
    size = archive.stat().st_size
    if size > MAX_ARCHIVE:
        raise ArchiveError(f"the archive is {megabytes(size)}, more than the {megabytes(MAX_ARCHIVE)} a model may be")
    if not zipfile.is_zipfile(archive):
        raise ArchiveError("this is not a zip archive: zip the model's folder (config.json, model.safetensors and "
                           "its tokenizer files)")
    with zipfile.ZipFile(archive) as z:
        members = [(info, member_path(info)) for info in z.infolist()]
        claimed = sum(info.file_size for info, _ in members)
        if claimed > MAX_UNPACKED:
            raise ArchiveError(f"the archive would unpack to {megabytes(claimed)}, more than {megabytes(MAX_UNPACKED)}")
        for info, path in members:
            if path is not None and info.file_size > 2**20 and info.file_size > MAX_RATIO * max(info.compress_size, 1):
                raise ArchiveError(f"{info.filename} unpacks to {info.file_size // max(info.compress_size, 1):,} times "
                                   "its packed size, as a zip bomb does: refused")
        written = 0
        for info, path in members:
            if path is None:
                continue
            target = dest.joinpath(*path.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with z.open(info) as src, open(target, "wb") as out:  # counted as written: headers can lie
                while chunk := src.read(2**20):
                    written += len(chunk)
                    if written > MAX_UNPACKED:
                        raise ArchiveError(f"the archive unpacks to more than {megabytes(MAX_UNPACKED)}: refused")
                    out.write(chunk)
    configs = sorted(p.parent for p in dest.rglob(CONFIG) if len(p.relative_to(dest).parts) <= 2)
    if len(configs) != 1:
        raise ArchiveError("the archive must hold one model folder with its config.json at the top (or in one "
                           f"folder): found {len(configs)}")
    return configs[0]


def checked_config(folder: Path) -> ModelConfig:
    """This project's config.json, and weights that fit it: names and shapes from the safetensors header, compared
    with the model that config builds (on the meta device: nothing allocated)."""
    try:
        cfg = ModelConfig.load(folder / CONFIG)
    except InputError as e:  # a number out of bounds: said as it is
        raise ArchiveError(f"config.json: {str(e)[:200]}") from None
    except Exception as e:
        raise ArchiveError(f"config.json is not a model configuration of this project ({type(e).__name__}: "
                           f"{str(e)[:200]})") from None
    within_bounds(cfg)  # from its numbers alone, before it is built
    with torch.device("meta"):
        expected = {k: tuple(v.shape) for k, v in Transformer(cfg).state_dict().items()}
    if not (folder / WEIGHTS).is_file():
        raise ArchiveError(f"the folder has no {WEIGHTS} (the weights, as safetensors)")
    try:
        with safe_open(str(folder / WEIGHTS), framework="pt") as f:
            found = {k: tuple(f.get_slice(k).get_shape()) for k in f.keys()}
    except Exception as e:
        raise ArchiveError(f"{WEIGHTS} is not a safetensors file ({type(e).__name__})") from None
    unknown = sorted(set(found) - set(expected))
    missing = sorted(set(expected) - set(found) - {"output.weight"})  # the output may be tied to the embedding
    wrong = sorted(k for k in set(found) & set(expected) if found[k] != expected[k])
    if unknown or missing or wrong:
        k = (wrong or unknown or missing)[0]
        said = (f"{k} is {found[k]} in {WEIGHTS} but {expected[k]} by config.json" if wrong else
                f"{WEIGHTS} has {k}, which config.json's model has not" if unknown else
                f"{WEIGHTS} lacks {k}, which config.json's model needs")
        count = len(wrong) + len(unknown) + len(missing)
        raise ArchiveError(f"the weights do not fit the config: {said}" + (f" ({count} tensors differ)" if count > 1
                                                                             else ""))
    return cfg


def within_bounds(cfg: ModelConfig) -> None:
    """ArchiveError for a model larger than MAX_PARAMETERS, counted from the config's numbers (each already in
    ModelConfig's bounds): nothing built, whatever the file asks for."""
    if cfg.n_parameters > MAX_PARAMETERS:
        raise ArchiveError(f"config.json describes a model of {cfg.n_parameters:,} parameters, more than the "
                           f"{MAX_PARAMETERS:,} a model may have here")


def is_marian(folder: Path) -> bool:
    try:
        return json.loads((folder / CONFIG).read_text(encoding="utf-8")).get("model_type") == "marian"
    except (OSError, ValueError, AttributeError):
        return False


def open_model(path: str | Path, work: str | Path | None = None, device: str = "cpu") -> Translator:
    """A Translator from a zip or a folder, of this project's format or Marian's (imported); checked first (module
    docstring). A zip unpacks, and a Marian folder is imported, into `work` (by default a new temporary folder): the
    caller removes it when done with the model; a refused model leaves nothing there. A folder given is read where
    it is, never changed."""
    work = Path(work) if work is not None else Path(tempfile.mkdtemp(prefix="transformer-model-"))
    try:
        return opened(Path(path), work, device)
    except Exception:  # refused: nothing it unpacked or imported stays behind
        for made in ("unpacked", "imported"):
            shutil.rmtree(work / made, ignore_errors=True)
        raise


def opened(path: Path, work: Path, device: str) -> Translator:
    folder = unpack(path, work / "unpacked") if path.is_file() else path
    if not folder.is_dir():
        raise ArchiveError(f"{path} is neither a zip archive nor a folder")
    if is_marian(folder):
        from .interop.marian import config_from_marian, import_marian

        try:
            within_bounds(config_from_marian(json.loads((folder / CONFIG).read_text(encoding="utf-8"))))
        except InputError as e:  # a Marian layout this project does not run, or a number out of bounds
            raise ArchiveError(str(e)) from None
        except (ValueError, TypeError, AttributeError) as e:
            raise ArchiveError(f"config.json is not an OPUS-MT configuration ({type(e).__name__})") from None
        try:
            folder = import_marian(str(folder), work / "imported")
        except InputError as e:
            raise ArchiveError(str(e)) from None
        except Exception as e:  # a shape that does not fit, a broken file: said in a sentence
            raise ArchiveError(f"the OPUS-MT folder could not be imported ({type(e).__name__}: {str(e)[:200]})"
                               ) from None
    checked_config(folder)
    try:
        return Translator.load(folder, device=device)
    except Exception as e:
        raise ArchiveError(f"the model could not be loaded ({type(e).__name__}: {str(e)[:300]})") from None

