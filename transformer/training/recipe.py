"""A trained model is what its recipe makes. One TOML file per model (recipes/*.toml) holds everything that makes it:
the corpora and how often each part is seen, the augmentation, the vocabulary, the shape, the schedule, the epochs
or a time budget, the averaging, the seed, and the scores to record. `python -m transformer train --recipe FILE
--data DIR --out DIR` trains it from the corpora on whatever device is there, averages, counts the words the page
needs, evaluates, and writes the checkpoint with the recipe's name and hash in its config.json.

A recipe's [model] and [train] tables are ModelConfig's and TrainConfig's fields (transformer/config.py says what
each one does); [data] names the corpus folders under --data; [[evaluate]] lists the scores recorded in
metrics.json. A fine-tuning stage is a recipe whose [train] has `init_from`."""
from __future__ import annotations

import dataclasses
import hashlib
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..config import ModelConfig, TrainConfig
from ..errors import InputError

TABLES = {"name", "about", "data", "model", "train", "evaluate"}
DATA_KEYS = {"corpora", "limit"}
EVALUATE_KEYS = {"record", "corpus", "split", "beam", "perturb", "limit", "class_sets"}


@dataclass
class Score:
    """One score recorded in metrics.json: a corpus's split translated (greedy, or beam k; typed as `perturb`
    says), or the class sets (class_sets = true)."""

    record: str
    corpus: str = ""
    split: str = "test"
    beam: int = 1
    perturb: str = "none"
    limit: int = 0  # the first N sentences only (0: all)
    class_sets: bool = False


@dataclass
class Recipe:
    name: str
    path: Path
    sha256: str  # of the file as read: two runs of the same hash are the same recipe
    corpora: list[str]  # folders under --data, e.g. multi30k, tatoeba
    model: ModelConfig
    train: TrainConfig
    limit: int = 0  # only the first N training pairs of each corpus (a smoke recipe)
    scores: list[Score] = field(default_factory=list)

    @property
    def stamp(self) -> str:
        """What the checkpoint's config.json keeps of the recipe that made it."""
        return f"{self.name} sha256:{self.sha256[:16]}"


def _fields(cls, table: dict, where: str) -> dict:
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(table) - known)
    if unknown:
        raise InputError(f"{where}: unknown key(s) {', '.join(unknown)}; the known ones are {cls.__name__}'s fields "
                         "(transformer/config.py)")
    return table


def load(path: str | Path) -> Recipe:
    """A recipe file, checked: every key known, every value of the right kind (a plain message otherwise)."""
    path = Path(path)
    raw = path.read_bytes()
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise InputError(f"{path} is not a TOML file: {e}") from None
    unknown = sorted(set(doc) - TABLES)
    if unknown:
        raise InputError(f"{path}: unknown table(s) {', '.join(unknown)}; a recipe has {', '.join(sorted(TABLES))}")
    data = doc.get("data", {})
    if set(data) - DATA_KEYS or not data.get("corpora"):
        raise InputError(f"{path}: [data] needs `corpora` (folders under --data) and may have `limit`")
    scores = []
    for i, entry in enumerate(doc.get("evaluate", [])):
        if set(entry) - EVALUATE_KEYS or "record" not in entry:
            raise InputError(f"{path}: [[evaluate]] {i + 1} needs `record` and may have "
                             f"{', '.join(sorted(EVALUATE_KEYS - {'record'}))}")
        scores.append(Score(**entry))
    train = TrainConfig(**_fields(TrainConfig, doc.get("train", {}), f"{path} [train]"))
    model = ModelConfig(**_fields(ModelConfig, doc.get("model", {}), f"{path} [model]") | {
        "recipe": f"{doc.get('name', path.stem)} sha256:{hashlib.sha256(raw).hexdigest()[:16]}"})
    for f in dataclasses.fields(TrainConfig):  # TOML's types against the dataclass defaults'
        value = getattr(train, f.name)
        if not isinstance(value, type(f.default)) and not (isinstance(f.default, float) and isinstance(value, int)):
            raise InputError(f"{path} [train] {f.name}: a {type(f.default).__name__} is expected, not {value!r}")
    return Recipe(doc.get("name", path.stem), path, hashlib.sha256(raw).hexdigest(), list(data["corpora"]), model,
                  train, int(data.get("limit", 0)), scores)


def run(recipe: Recipe, data: str | Path, out: str | Path, resume: bool = False) -> Path:
    """Trains the recipe's model from the corpora under `data` into `out` (averaged as the recipe says), then writes
    what the page reads beside it (the training words) and records the recipe's scores; returns `out`."""
    from ..metrics import Metrics
    from ..translator import Translator
    from ..words import TrainingWords
    from .train import train, training_pairs

    folders = [str(Path(data) / c) for c in recipe.corpora]
    missing = [f for f in folders if not Path(f).is_dir()]
    if missing:
        raise InputError(f"corpus folder(s) not found: {', '.join(missing)} (give --data the folder that holds "
                         f"{', '.join(recipe.corpora)})")
    train(folders, str(out), recipe.model, recipe.train, resume, recipe.limit)
    pair = recipe.train.pair
    TrainingWords.count(*training_pairs(folders, pair, recipe.train.phrasebook, recipe.limit),
                        pair.split("-")[1]).save(out)
    translator = Translator.load(out, device="cpu")
    for score in recipe.scores:
        recorded(translator, Path(data), Path(out), score)
    Metrics.load(out)  # the checkpoint reads back, scores and all
    return Path(out)


def recorded(translator, data: Path, out: Path, score: Score) -> None:
    """One of the recipe's scores, measured and kept in the checkpoint's metrics.json."""
    from ..decoding import DecodeOptions
    from ..metrics import Metrics
    from .class_sets import class_sets
    from .data import open_corpora
    from .evaluate import evaluate, record, report
    from .noise import perturb

    options = DecodeOptions("beam" if score.beam > 1 else "greedy", beam_size=max(score.beam, 1))
    if score.class_sets:
        metrics = Metrics.load(out)
        metrics.class_sets = {name: {k: v for k, v in r.items() if k not in ("wrong", "lost", "changed")}
                              | {"beam": score.beam} for name, r in class_sets(translator, options).items()}
        metrics.save(out)
        return
    src, refs = open_corpora(str(data / score.corpus), translator.metrics.pair)[0].split(score.split)
    result = evaluate(translator, [perturb(s, score.perturb) for s in src], refs, options, 64, score.limit)
    record(str(out), score.record, result, {"src": f"{data / score.corpus} ({score.split})", "beam": score.beam,
                                            "length_penalty": 1.0, "perturb": score.perturb})
    print(f"{score.record}: {report(result)}", flush=True)
