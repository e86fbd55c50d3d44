"""The top of the page: language pair, text, decoding settings, the translation and the three-way comparison; and the
warnings under a translation (numbers and names not as typed, a source not in English, far from the training data)."""
from __future__ import annotations

import functools
import html
import json
import re
from dataclasses import replace

import gradio as gr

from transformer.decoding import MAX_BEAM, DecodeOptions
from transformer.translator import MAX_SENTENCES

from playground.context import ROOT, Context
from playground.view import friendly
from playground.views.common import cards

EXAMPLES = json.loads((ROOT / "assets" / "examples.json").read_text(encoding="utf-8"))
PICK = "Pick an example sentence"  # the menu's first line: choosing a sentence translates it at once
PRESENT_JS = "(on) => tp.present(on)"  # in the browser (assets/page.js): presentation mode on or off


def words(translations) -> list[tuple[str, bool]]:
    """The translations' words, each with whether it holds a piece the model was unsure of (Translation.unsure).
    Pieces are joined into words as the vocabulary writes them (▁ starts a word); symbols carried over are not the
    model's and are not among them."""
    said: list[list] = []
    for t in translations:
        for i, piece in enumerate(t.target_tokens):
            text, unsure = piece.replace("\u2581", " "), i in t.unsure
            if not said or text.startswith(" ") or not said[-1][0]:
                said.append([text.strip(), unsure])
            else:
                said[-1][0] += text
                said[-1][1] |= unsure
    return [(w, u) for w, u in said if w]


def marked(translations) -> str:
    """The translations' words, those the model was unsure of marked, and the legend; "" when it was sure of every
    piece."""
    said = words(translations)
    if not any(u for _, u in said):
        return ""
    line = " ".join(f'<mark class="unsure">{html.escape(w)}</mark>' if u else html.escape(w) for w, u in said)
    return (f'<p class="unsure-line">{line}</p>'
            '<p class="unsure-legend"><mark class="unsure">word</mark> the model was unsure here</p>')


def shortened(text: str, most: int = 80) -> str:
    """`text`, or its first `most` - 1 characters and an ellipsis."""
    return text if len(text) <= most else text[: most - 1] + "…"


class TranslatePanel:
    def __init__(self, ctx: Context, extras=None, present_extras=None):
        """extras, present_extras: build more controls in the row under the panel, and in presentation mode's bar
        (the class's: playground/class_panel.py)."""
        self.ctx = ctx
        pairs = ctx.pairs
        # One compact block, so that the first screen also holds the model at a glance: the sentence, the button and
        # the translation on one line (each on its own on a phone), the examples as a menu, the settings folded.
        with gr.Row(equal_height=True, elem_id="panel"):
            self.pair = gr.Dropdown([(ctx.label(p), p) for p in pairs], value=pairs[0] if pairs else None,
                                    label="Language pair", scale=1, min_width=230, elem_id="pair")  # a phone: its own line
            # one line that grows: Enter translates, Shift+Enter starts a new line (Gradio submits on Enter only
            # in a one-line box)
            self.text = gr.Textbox(label="English text", value=EXAMPLES[0], lines=1, max_lines=4, max_length=20000,
                                   placeholder="Type an English sentence. Enter translates; Shift+Enter starts a new line.",
                                   scale=4, min_width=240, elem_id="source-text")
            self.go = gr.Button("Translate", variant="primary", scale=0, min_width=110, elem_id="translate-button")
            self.translation = gr.Textbox(label="Translation", interactive=False, scale=4, min_width=240,
                                          elem_id="translation")
        with gr.Row(elem_id="panel-extras"):
            self.examples = gr.Dropdown([(PICK, "")] + EXAMPLES, value="", show_label=False, container=False, scale=1,
                                        min_width=240, elem_id="examples")
            with gr.Column(scale=1, min_width=240), gr.Accordion("Decoding, presentation mode, link", open=False,
                                                               elem_id="decoding"):
                self.settings()
            if extras:
                extras()
        self.link = gr.Textbox(label="Shareable link: opens this pair, sentence and decoding, already translated",
                               interactive=False, buttons=["copy"], visible=False, elem_id="share-link")
        # in presentation mode the settings are folded away: these two (shown only then, under the panel) make the link
        # and leave it
        with gr.Row(elem_id="present-bar"):
            self.present_share = gr.Button("Link to this", size="sm", scale=0, min_width=90)
            self.present_leave = gr.Button("Leave presentation mode", size="sm", scale=0, min_width=90)
            if present_extras:
                present_extras()
        with gr.Column(elem_id="panel-out"):  # nothing to say: no room taken
            self.unsure = gr.HTML(elem_id="unsure")  # the translation with the pieces the model was unsure of marked
            self.notice = gr.Markdown(elem_classes="notice")
            # a text of several sentences: which one the views show (the first until another is chosen)
            self.which = gr.Dropdown([("1", 0)], value=0, label="The views below show", visible=False,
                                     interactive=True, elem_id="which-sentence")
            self.samples = gr.HTML()
            self.comparison = gr.HTML()

    def settings(self) -> None:
        """The folded settings: decoding, the three-way comparison, presentation mode and the link."""
        with gr.Row():
            self.strategy = gr.Radio([("Greedy", "greedy"), ("Random sampling", "sample"), ("Beam search", "beam")],
                                     value="greedy", label="Decoding")
            self.max_len = gr.Slider(0, 200, value=0, step=1, label="Max length (0: automatic)")
        with gr.Row():  # on: a word, or a piece inside one, at most twice in a row (a single letter three times), a
            # phrase of two or three words once; off shows the model's own stutters ("Görs·ev·ev·ev", "zu spät zu spät")
            self.stutter_guard = gr.Checkbox(
                True, label="Stutter guard: a word, or a piece inside one, at most twice in a row; a phrase once",
                elem_id="stutter-guard")
        with gr.Row():
            self.temperature = gr.Slider(0, 3, value=1.0, step=0.05, label="Temperature (0: greedy)", visible=False)
            self.top_k = gr.Slider(0, 100, value=0, step=1, label="Top-k (0: off)", visible=False)
            self.top_p = gr.Slider(0.05, 1, value=1.0, step=0.05, label="Top-p (1: off)", visible=False)
            self.seed = gr.Number(0, precision=0, minimum=0, label="Seed", visible=False)
            self.n_samples = gr.Slider(1, 8, value=3, step=1, label="Samples side by side", visible=False)
            self.beam_size = gr.Slider(1, MAX_BEAM, value=4, step=1, label="Beam size", visible=False)
            self.length_penalty = gr.Slider(0, 2, value=1.0, step=0.1, label="Length penalty", visible=False)
        with gr.Row():
            self.new_sample = gr.Button("New sample (next seed)", visible=False, elem_id="new-sample")
            self.compare_button = gr.Button("Compare greedy, sampling and beam search")
        with gr.Row():
            self.present = gr.Checkbox(False, label="Presentation mode (larger, for a projector)", elem_id="present-toggle")
            self.share = gr.Button("Link to this sentence and these settings", elem_id="share-button")
    @property
    def decoding(self) -> list:
        """The decoding controls, in the order of DecodeOptions' fields (max length 0: automatic)."""
        return [self.strategy, self.temperature, self.top_k, self.top_p, self.seed, self.beam_size,
                self.length_penalty, self.max_len, self.stutter_guard]

    @property
    def controls(self) -> list:
        return [self.pair, self.text, self.n_samples] + self.decoding

    @property
    def outputs(self) -> list:
        return [self.translation, self.unsure, self.notice, self.samples, self.which]

    def sentence_menu(self, parts: list[str], which: int, shown: bool = True) -> dict:
        """The menu of the text's sentences (at most MAX_SENTENCES), `which` chosen; shown for two or more."""
        kept = parts[:MAX_SENTENCES]
        choices = [(f"{i + 1}. {shortened(part)}", i) for i, part in enumerate(kept)]
        return {self.which: gr.update(choices=choices, value=which, visible=shown and len(kept) > 1)}

    def options(self, values: dict):
        return DecodeOptions(*(values[c] for c in self.decoding))

    def fill(self, result, values: dict) -> dict:
        """The translation, notices when the source was cut, lies far from what the model knows, is not English, or
        has a number or a name the translation changed, a word it left in English or made up or an article that
        does not fit its noun, and more samples side by side when asked for."""
        translator = self.ctx.translator(result.pair)
        notices = [CUT] if result.translation.truncated else []
        notices += said_under(translator, result.text, result.translation)
        notice = html.escape(" ".join(notices).strip())
        samples = ""
        n = int(values[self.n_samples] or 1)
        if result.options.strategy == "sample":  # the box is sample 1; the others are drawn from the next seed
            seed = result.options.seed
            more = translator.translate_batch([result.text] * (n - 1), replace(result.options, seed=seed + 1)) if n > 1 else []
            names = [f"sample 1 of {n} (seed {seed}): the translation above"] + [f"sample {i}" for i in range(2, n + 1)]
            samples = cards(list(zip(names, [result.translation.text] + [s.text for s in more])))
        return {self.translation: result.translation.text, self.unsure: marked([result.translation]),
                self.notice: notice, self.samples: samples}

    def joined(self, translator, result, parts: list[str], which: int = 0) -> dict:
        """With several sentences, the box holds each one's translation (sentence `which`'s is `result`'s, the one
        the views show), joined, and the notice says so, with what the checks found in every sentence (each kind
        said once); at most MAX_SENTENCES of them. Nothing to change for one sentence."""
        if len(parts) < 2:
            return {}
        kept = parts[:MAX_SENTENCES]
        others = translator.translate_batch(kept[:which] + kept[which + 1:], result.options)
        every = others[:which] + [result.translation] + others[which:]
        left = f"; the {len(parts) - len(kept)} after the first {len(kept)} were left out" if len(parts) > len(kept) else ""
        note = (f"Translated as {len(parts)} sentences, one at a time (the model learned single sentences){left}; "
                f"the views below show sentence {which + 1}, “{shortened(result.text)}” (choose another just below).")
        cut = [CUT] if any(t.truncated for t in every) else []
        notice = html.escape(" ".join([note] + cut + said_under(translator, kept, every)))
        return {self.translation: " ".join(t.text for t in every), self.unsure: marked(every), self.notice: notice}

    def strategy_controls(self, strategy: str) -> dict:
        sampling, beam = strategy == "sample", strategy == "beam"
        return ({c: gr.update(visible=sampling) for c in (self.temperature, self.top_k, self.top_p, self.seed,
                                                            self.n_samples, self.new_sample)}
                | {c: gr.update(visible=beam) for c in (self.beam_size, self.length_penalty)})

    @friendly
    def compare(self, pair, text, *decoding) -> dict:
        """The same sentence with greedy decoding, the sampling settings and the beam settings."""
        t, opts = self.ctx.translator(pair), DecodeOptions(*decoding)
        rows = [("greedy", "greedy"), (f"sample (T={opts.temperature:g}, seed {opts.seed})", "sample"),
                (f"beam search (k={opts.beam_size})", "beam")]
        said = (f'<p class="cards-for">Compared for “{html.escape(text.strip())}”, {html.escape(self.ctx.label(pair))}:'
                "</p>")  # the cards stay while other sentences are translated: they say which one they show
        return {self.comparison: said + cards([(name, t.translate(text, replace(opts, strategy=s)).text)
                                               for name, s in rows])}

    def wire(self) -> None:
        """The panel's own events (the page translates after some of them; links.py writes the shareable link)."""
        self.strategy.change(self.strategy_controls, self.strategy,
                             [self.temperature, self.top_k, self.top_p, self.seed, self.n_samples, self.new_sample,
                              self.beam_size, self.length_penalty], api_visibility="private")
        # the page translates after each of these (playground/page.py), so the Translation box is always the sentence's
        self.compared = self.compare_button.click(self.compare, [self.pair, self.text] + self.decoding, self.comparison,
                                                  api_visibility="private")
        self.reseeded = self.new_sample.click(lambda seed: int(seed or 0) + 1, self.seed, self.seed, queue=False,
                                              api_visibility="private")
        # an example from the menu goes into the box (the page then translates it); the menu's first line picks none
        self.picked = self.examples.input(lambda example: example or gr.skip(), self.examples, self.text, queue=False,
                                          api_visibility="private")
        self.present.change(None, self.present, None, js=PRESENT_JS)
        self.present_leave.click(lambda: False, None, self.present, queue=False, api_visibility="private")


# -----------------------------------------------------------------------------
# Warnings a class can trust, said under the translation: a number or a name that did not come out as typed, a word
# left in English (transformer/words.py), a French article not elided, and a source that is not English. The
# translation is shown all the same; each warning says what to check.
#
# The language is told by py3langid (a small offline model inside the package, no download), among the languages a
# class is likely to type, and only when it is sure: short greetings ("Hi!") are too short to tell.


LANGUAGES = {"en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian", "nl": "Dutch",
             "pt": "Portuguese", "pl": "Polish", "tr": "Turkish", "sv": "Swedish", "da": "Danish", "ru": "Russian",
             "uk": "Ukrainian", "ar": "Arabic", "zh": "Chinese", "ja": "Japanese", "ko": "Korean", "el": "Greek"}
SURE = 0.8  # the language identifier's probability above which a source is called another language
CUT = "The text was longer than the model's positions and was cut to fit."
# Capitalised words a translation rightly changes (Monday -> Montag, Germany -> Deutschland): never called names
TRANSLATED = set("""Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July
August September October November December Christmas Easter Halloween God English German French Spanish Italian
Portuguese Dutch Polish Russian Chinese Japanese Korean Arabic Turkish Greek Swedish European American African Asian
British Germany France Spain Italy Portugal Austria Switzerland Belgium Netherlands Holland Poland Russia China Japan
Korea India Turkey Greece Sweden Norway Denmark Finland Ireland Scotland England Britain Europe America Africa Asia
Australia Canada Mexico Brazil Egypt Morocco Algeria Tunisia Munich Cologne Vienna Rome Venice Florence Milan Naples
Lisbon Moscow Warsaw Prague Athens Brussels Geneva London Mr Mrs Ms Dr Mister Miss Sir Madam""".split())
ABBREVIATION = re.compile(r"\b(?:Mr|Mrs|Ms|Dr|St)\.\s*$")  # a full stop that does not end a sentence
NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")  # 25, 1989, 10:45, 3.50, 2,000: one number, however it is written


@functools.lru_cache(maxsize=1)
def _identifier():
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_modelpath(MODEL_DIR / MODEL_FILE, norm_probs=True)
    identifier.set_languages(list(LANGUAGES))
    return identifier


def language(text: str) -> tuple[str, float]:
    """(ISO code, probability) of the language `text` is most likely written in, among LANGUAGES."""
    code, prob = _identifier().classify(text)
    return code, float(prob)


def not_english(text: str) -> str:
    """A sentence when `text` is surely not English (two words or more), else ""."""
    if len(re.findall(r"\w+", text)) < 2:
        return ""
    code, prob = language(text)
    if code == "en" or prob < SURE:
        return ""
    return (f"This looks like {LANGUAGES[code]}, not English: the model reads English only, so its translation "
            "will make little sense.")


def digits(number: str) -> str:
    return re.sub(r"\D", "", number)


def changed_numbers(source: str, translation: str) -> list[str]:
    """The source's numbers of two or more digits whose digits the translation does not write, in order, as one of
    its own numbers (10:45 may come out as 10.45, 2,000 as 2.000; a small number may be written as a word)."""
    written = {digits(n) for n in NUMBER.findall(translation)}
    return [n for n in NUMBER.findall(source) if len(digits(n)) >= 2 and digits(n) not in written]


def lost_names(source: str, translation: str, tokenizer) -> list[str]:
    """Names in the source the translation does not write unchanged: capitalised words, not the first of a sentence,
    that the model cuts into several pieces (a word it knows whole it may rightly translate), and not in TRANSLATED."""
    if source.upper() == source:
        return []  # shouting: every word is capitalised
    lost = []
    for match in re.finditer(r"(?<![\w'’])[A-ZÀ-Þ][\w'’-]*", source):
        word = re.sub(r"['’]s$", "", match.group()).rstrip("'’-")
        before = source[: match.start()]
        first = not before.strip() or (re.search(r"[.!?:]\s*$", before) and not ABBREVIATION.search(before))
        if first or word == "I" or word in TRANSLATED or len(tokenizer.encode(word)) < 2:
            continue
        kept = re.search(rf"(?<!\w){re.escape(word)}(?:s|['’]s?)?(?!\w)", translation)  # Annas, Lukas'
        if not kept and word not in lost:
            lost.append(word)
    return lost


# French writes "l'écureuil", never "le écureuil": an article or a pronoun left whole before a vowel is a slip (none of
# our 1,581 written references has one); "de un à dix", "le onze", "le oui" and letters ("de A à B") are not
UNELIDED = re.compile(r"(?<![\w'’-])(le|la|de|je|me|te|se|ne|que|jusque|lorsque|puisque) +"
                      r"([aeiouàâäéèêëîïôöùûü][\w'’-]*)", re.IGNORECASE)
ELIDED_ANYWAY = {"un", "une", "onze", "onzième", "oui", "ouistiti", "ouate", "et", "ou"}


def missed_elisions(translator, translation: str) -> list[tuple[str, str]]:
    """(as written, as French writes it) for each article or pronoun a French translation left whole before a vowel
    ("le écureuil" -> "l'écureuil"); none for a model that does not translate into French (or does not say)."""
    if not translator.metrics.train_config.get("pair", "").endswith("-fr"):
        return []
    slips = []
    for match in UNELIDED.finditer(translation):
        word, after = match.groups()
        if after.lower() in ELIDED_ANYWAY or len(after) == 1 or after.isupper():
            continue
        slips.append((match.group(0), f"{word[:-1]}'{after}"))
    return slips


def findings(translator, source: str, translation: str) -> dict[str, list]:
    """What the checks found in one translated sentence, by kind: "foreign" (the source is not English: said
    instead of the names and words, which would name the source's own), "numbers", "names", "left" (in English),
    "made" (made up), "misfits" (articles), "slips" (French elisions)."""
    foreign = not_english(source)
    words = translator.words
    return {"foreign": [foreign] if foreign else [],
            "numbers": changed_numbers(source, translation),
            "names": [] if foreign else lost_names(source, translation, translator.tokenizer),
            "left": words.left_in_english(source, translation) if words and not foreign else [],
            "made": words.made_up(source, translation) if words and not foreign else [],
            "misfits": words.misfits(translation) if words else [],
            "slips": missed_elisions(translator, translation)}


def say(translator, found: dict[str, list]) -> list[str]:
    """findings in plain words, one sentence a kind (several sentences' findings merged: each kind said once)."""
    def it(items, one="it", many="them"):
        return one if len(items) == 1 else many

    said = list(found["foreign"])
    if found["numbers"]:
        said.append(f"Check the numbers: {', '.join(found['numbers'])} did not come out as typed.")
    if found["names"]:
        said.append(f"Check the names: {', '.join(found['names'])} did not come out as typed (the model may not know "
                    f"{it(found['names'])}).")
    if found["left"]:
        said.append(f"Check the words: {', '.join(found['left'])} came out in English (the model may not know "
                    f"{it(found['left'])}, and copied {it(found['left'])}).")
    if found["made"]:
        language = LANGUAGES.get(translator.words.language)
        dictionary = f"{language} dictionary" if language else "dictionary"
        said.append(f"Check the words: {', '.join(found['made'])} {it(found['made'], 'is', 'are')} in no {dictionary} "
                    f"and in none of the translations the model learned from (it may have made {it(found['made'])} up "
                    "from pieces).")
    if found["misfits"]:
        said.append(f"Check the {LANGUAGES.get(translator.words.language, 'translation')}: "
                    + ", ".join(f"“{m}”" for m in found["misfits"])
                    + f": the article does not fit {it(found['misfits'], 'its noun', 'their nouns')}"
                    " (the model slipped here).")
    if found["slips"]:
        said.append("Check the French: " + ", ".join(f"“{a}” is written “{b}”" for a, b in found["slips"])
                    + " (the model slipped here).")
    return said


def warnings(translator, source: str, translation: str) -> list[str]:
    """Every warning for one translated sentence, in plain words."""
    return say(translator, findings(translator, source, translation))


def said_under(translator, sources: str | list[str], translations) -> list[str]:
    """What the page says under a translation (a Translation of `source`, or each sentence's of a text): the symbols
    carried over, text far from what the model knows, and every warning, each kind said once for all the sentences
    ("Check the words: Garik, Sämchen ..."); empty when there is nothing to say."""
    if isinstance(sources, str):
        sources, translations = [sources], [translations]
    said = [s for source, t in zip(sources, translations) for s in (carried(t), unfamiliar(translator, source)) if s]
    found: dict[str, list] = {}
    for source, t in zip(sources, translations):
        for kind, items in findings(translator, source, t.text).items():
            found[kind] = list(dict.fromkeys(found.get(kind, []) + items))  # a word named once
    return list(dict.fromkeys(said + say(translator, found)))


def carried(translation) -> str:
    """A sentence naming the symbols set aside from the source and put back as typed (Translation.carried), else ""."""
    if not translation.carried:
        return ""
    them = "it" if len(translation.carried) == 1 and len(translation.carried[0]) == 1 else "them"
    return (f"Carried over as typed: {' '.join(translation.carried)} (the model has no pieces for {them}, so it "
            f"translated the words around {them}).")


def unfamiliar(translator, text: str) -> str:
    """A plain sentence when `text` lies far outside what the model was trained on, else "" (Translator.familiarity)."""
    seen = translator.familiarity(text)
    if seen.unknown:
        return ("This text has characters the model has never seen (its vocabulary spells them byte by byte, or "
                "reads each run of them as one <unk>): it was trained on English picture captions and everyday "
                "sentences, so expect a poor translation.")
    if seen.far:
        return (f"The model splits these words into many small pieces ({seen.pieces_per_word:.1f} per word): they "
                "are far from the picture captions and everyday sentences it was trained on, so expect a poor "
                "translation.")
    return ""
