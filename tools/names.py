"""First names (and surnames) from many countries for training and for the held-out names set.

    pip install -r requirements-train.txt && python tools/names.py --data-dir ../shared/data

Writes data/names.json: names drawn by training (transformer/training/augment.py) and names held out for
the names set (transformer/training/class_sets.py). Faker's per-locale lists are the source; only names in
Latin letters, one word, and not a word the corpora use in lowercase. A name is held out by the SHA-1 of its
text (about one in eight), so the split never depends on Faker's order, and never if the corpora already
name it (a held-out name must be new to the model).
"""
import argparse
import collections
import hashlib
import json
import re
import sys
from pathlib import Path

import faker

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from transformer.training.augment import DATA_NAMES  # noqa: E402
from transformer.training.data import read_lines  # noqa: E402

# Locales with lists of their own (many others fall back to en_US's), by region; ja_JP and zh_CN romanized
LOCALES = ("en_US en_GB en_IE en_IN en_KE en_NG de_DE de_AT fr_FR fr_BE fr_DZ es_ES es_MX es_CO pt_PT pt_BR it_IT "
           "nl_NL da_DK sv_SE no_NO fi_FI et_EE lv_LV pl_PL cs_CZ sk_SK sl_SI hr_HR hu_HU ro_RO tr_TR az_AZ uz_UZ "
           "ga_IE id_ID vi_VN sw ha_NG ig_NG yo_NG zu_ZA tw_GH ja_JP zh_CN").split()
LATIN = re.compile(r"[A-ZÀ-ÞĀ-ž][a-zß-ÿĀ-ž]{1,11}")  # one capitalised word of 2-12 Latin letters
HELD_OUT = 8  # one name in this many


def held_out(name: str) -> bool:
    return int(hashlib.sha1(name.encode("utf-8")).hexdigest(), 16) % HELD_OUT == 0


def names_of(locale: str, gender: str) -> set[str]:
    fake = faker.Faker(locale)
    person = fake.provider("faker.providers.person")
    if locale in ("ja_JP", "zh_CN"):
        draw = getattr(fake, f"first_romanized_name_{'male' if gender == 'm' else 'female'}", None) \
            or fake.first_romanized_name
        return {draw() for _ in range(2000)}
    table = person.first_names_male if gender == "m" else person.first_names_female
    return set(table)


def surnames_of(locale: str) -> set[str]:
    fake = faker.Faker(locale)
    if locale in ("ja_JP", "zh_CN"):
        return {fake.last_romanized_name() for _ in range(2000)}
    return set(fake.provider("faker.providers.person").last_names)


def corpus_words(data_dir: Path) -> tuple[collections.Counter, set[str]]:
    """Lowercase words of every training file, and the capitalised words (names the corpora already use)."""
    lower, capital = collections.Counter(), set()
    for path in sorted(data_dir.glob("**/train.*.gz")):
        for line in read_lines(path):
            for word in re.findall(r"\w+", line):
                (lower.update if word.islower() else capital.add)([word] if word.islower() else word)
    return lower, capital


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default="../shared/data", help="holds multi30k/ and tatoeba/")
    ap.add_argument("--out", default="data/names.json")
    args = ap.parse_args()
    lower, capital = corpus_words(Path(args.data_dir))
    common = {w for w, n in lower.items() if n >= 3}

    def usable(name: str) -> bool:
        return bool(LATIN.fullmatch(name)) and name.lower() not in common and name not in DATA_NAMES

    by_gender = {g: {n for loc in LOCALES for n in names_of(loc, g) if usable(n)} for g in "mf"}
    both = by_gender["m"] & by_gender["f"]  # a name given to either is left out: its pronouns are unknown
    out = {"source": f"Faker {faker.VERSION}: first names of {len(LOCALES)} locales ({', '.join(LOCALES)})",
           "train": {}, "heldout": {}}
    for g, names in by_gender.items():
        names = sorted(names - both)
        out["train"][g] = [n for n in names if not held_out(n)]
        out["heldout"][g] = [n for n in names if held_out(n) and n not in capital]
    surnames = sorted({n for loc in LOCALES for n in surnames_of(loc) if usable(n)})
    out["surnames"] = {"train": [n for n in surnames if not held_out(n)],
                       "heldout": [n for n in surnames if held_out(n) and n not in capital]}
    Path(args.out).write_text(json.dumps(out, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    sizes = {k: {g: len(v) for g, v in out[k].items()} for k in ("train", "heldout")}
    print(f"wrote {args.out}: {sizes}, surnames {len(out['surnames']['train'])} + {len(out['surnames']['heldout'])}")


if __name__ == "__main__":
    main()
