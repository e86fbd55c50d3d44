"""tools/judge.py: a reader's verdicts filed into data/judged.json, which keeps one layout."""
import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from judge import file_verdicts, layout  # noqa: E402

from transformer.training.class_sets import JUDGED, labelled  # noqa: E402


def test_the_judged_file_is_kept_in_its_own_layout():
    text = JUDGED.read_text(encoding="utf-8")
    assert layout(json.loads(text)) == text


def test_verdicts_are_filed_by_language_and_sentence_and_bad_ones_refused(tmp_path):
    path = tmp_path / "judged.json"
    shutil.copy(JUDGED, path)
    en = labelled("fr", with_judged=False)[-1][0]  # a word frame of the classroom corpus: held out
    lines = [{"lang": "fr", "en": en, "translation": "Une traduction lue.", "verdict": "right"},
             {"lang": "fr", "en": en, "translation": "Pas encore lue.", "verdict": None}]  # not read: left out
    assert file_verdicts(lines, path) == 1 and file_verdicts(lines, path) == 0  # once only
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["fr"]["right"][en][-1] == "Une traduction lue." and "Pas encore lue." not in str(data)
    assert layout(data) == path.read_text(encoding="utf-8")
    for bad in ({"verdict": "maybe"}, {"en": "A sentence of no labelled set."}, {"lang": "es"}, {"translation": ""},
                {"verdict": "wrong"}):  # the last: judged right above
        with pytest.raises(ValueError, match="cannot file"):
            file_verdicts([lines[0] | bad], path)
    assert json.loads(path.read_text(encoding="utf-8")) == data  # nothing written by a refusal
