"""tools/rare_words.py: how often the corpora say a word, its plurals included, a phrase whole."""
import collections
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from rare_words import occurrences  # noqa: E402


def test_a_word_is_counted_with_its_plurals_and_a_phrase_only_whole():
    text = "a fox and two foxes. the crab crabs. turn off the tv! turn off the tvs? return off the tv"
    words = collections.Counter(re.findall(r"[a-z']+", text))
    assert occurrences("Fox", words, text) == 2 and occurrences("crab", words, text) == 2
    assert occurrences("turn off the TV", words, text) == 1  # not "tvs", not "return"
    assert occurrences("lunchbox", words, text) == 0
