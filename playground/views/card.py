"""Model card: config, parameters per component, test scores, device and how the checkpoint was trained."""
from __future__ import annotations

import gradio as gr
import torch

from transformer.metrics import Metrics

from playground.view import View, texts
from playground.i18n import ENGLISH, N_, Texts, _l


TATOEBA_CREDIT = N_("Sentence pairs from the Tatoeba Project (tatoeba.org), via manythings.org/anki, CC BY 2.0.")


def knows(metrics: Metrics, _: Texts = ENGLISH) -> str:
    """What the checkpoint was trained on, and so what kind of text it translates well, in plain sentences (in the
    language of `_`)."""
    def used(key: str) -> bool:  # a training option some stage set
        return any(stage.train_config.get(key) for stage in metrics.stages())

    def used_value(key: str) -> str:  # what the stages set it to, joined
        return " ".join(str(stage.train_config.get(key) or "") for stage in metrics.stages())

    if "tatoeba" not in metrics.trained_on():
        return _("**What it knows:** Multi30k's picture captions only. It translates short descriptions of a picture "
                 "well; everyday conversation and anything else poorly.")
    also = ""
    if used("source_noise"):
        also += _(", also typed without capitals or full stops")
    if "classroom" in used_value("phrasebook"):
        files = "`data/phrasebook.txt`, `data/classroom/`" + (", `data/more_words.tsv`" if "more_words" in
                                                              used_value("phrasebook") else "")
        also += _(", and this project's classroom corpus (what a class says: greetings, school, family, hobbies, food, "
                  "plans, festivals, questions to a machine, and everyday words in short frames: {files})", files=files)
    elif used("phrasebook"):
        also += _(", and this project's classroom phrasebook (greetings, introductions, school, wishes: "
                  "`data/phrasebook.txt`)")
    if used("swap_names"):
        also += _(", with names and numbers drawn anew")
    said = (_("**What it knows:** Multi30k's picture captions and Tatoeba's everyday sentences{also}.", also=also) + " "
            + _("It translates short, plain sentences well (what people do, say and ask, what a picture shows); "
                "long, technical or rare words poorly.") + " " + _(TATOEBA_CREDIT))
    if used("byte_fallback") and used("split_digits"):
        said += " " + _("Its vocabulary spells a character it lacks in bytes and a number digit by digit.")
    return said


def weights(model) -> list[tuple[str, torch.Tensor]]:
    """named_parameters, plus the int8 weights and biases of dynamically quantized Linear layers."""
    named = list(model.named_parameters())
    for name, module in model.named_modules():
        if callable(getattr(module, "weight", None)):  # torch.ao's quantized Linear keeps them packed
            named.append((f"{name}.weight", module.weight()))
            if module.bias() is not None:
                named.append((f"{name}.bias", module.bias()))
    return named


def parameter_breakdown(translator) -> list[tuple[str, int]]:
    """(component, parameters) in the order the model lists them; a shared matrix is counted once."""
    groups: dict[str, int] = {}
    for name, p in weights(translator.model):
        parts = name.split(".")
        if name == "embed.source_table.weight":
            key = "source embedding (encoder in)"
        elif parts[0] == "embed":
            key = ("target embedding (decoder in, output projection)" if translator.cfg.src_vocab_size
                   else "shared embedding (encoder in, decoder in, output projection)")
        elif name == "output.bias":
            key = "output bias"
        elif parts[0] == "output":  # only when quantized: the projection then has its own int8 copy
            key = "output projection (int8 copy of the embedding)"
        elif parts[1] == "layers":
            key = f"{parts[0]} {parts[3].replace('_', '-') if parts[3].startswith(('self', 'cross', 'feed')) else 'layer norms'}"
        else:
            key = f"{parts[0]} final layer norm"
        groups[key] = groups.get(key, 0) + p.numel()
    return list(groups.items())


def trained_with(metrics) -> str:
    """How the checkpoint was trained: its stages (epochs, minutes, hardware, command) and its averaging."""
    how = "\n".join(f"{i}. " + (f"epoch {start}" if start == end else f"epochs {start}-{end}")
                     + (f", {stage.train_wall_s / 60:.0f} minutes of steps" if stage.train_wall_s else "")
                     + (f" on {stage.hardware}" if stage.hardware else "") + f": `{stage.command or 'unknown command'}`"
                     for i, (stage, start, end) in enumerate(metrics.stage_epochs(), 1))
    how = f"{len(metrics.stages())} stage(s):\n\n{how}"  # a list: no full stop after it, which would stand alone
    if len(metrics.averaged_epochs) > 1:  # checkpoint averaging: the weights are no single epoch's
        how += f"\n\nThe weights are epochs {', '.join(map(str, metrics.averaged_epochs))} averaged."
    return how


def card_tables(breakdown: list[tuple[str, int]], cfg) -> str:
    """The checkpoint's parameters per component (`breakdown`: parameter_breakdown's, with each one's share) and its
    config, as two Markdown tables."""
    total = sum(n for _, n in breakdown)
    rows = "\n".join(f"| {name} | {n:,} | {100 * n / total:.1f}% |" for name, n in breakdown)
    config = "\n".join(f"| `{k}` | {v} |" for k, v in cfg.to_dict().items())
    return f"""| component | parameters | share |
| --- | ---: | ---: |
{rows}

| config | value |
| --- | --- |
{config}
"""


def model_card(translator, pair: str, title: str | None = None, _: Texts = ENGLISH) -> str:
    """The checkpoint in Markdown: device, parameters per component, config, test scores, how it was trained.
    title: what it is called (by default its pair, "EN-DE"). Its headline and sentences in the language of `_`; its
    tables and the training's commands as they are."""
    cfg, metrics = translator.cfg, translator.metrics
    title = title or pair.upper()
    breakdown = parameter_breakdown(translator)
    total = sum(n for _, n in breakdown)
    test = metrics.test
    scores = "\n".join(f"| {name} | {s.get('bleu_lc', float('nan')):.2f} | {s.get('bleu', float('nan')):.2f} | "
                       f"{s.get('chrf', float('nan')):.2f} |" for name, s in test.items()) or "| (not recorded) | | | |"
    how = trained_with(metrics)
    tables = card_tables(breakdown, cfg)
    imported = metrics.imported
    if imported:  # an OPUS-MT model: where it came from and under which licence, not how we trained it
        return f"""### {title} `{translator.name}`: imported

Imported from **{imported['source']}** ({imported['architecture']}), licence **{imported['licence']}**; trained by
its authors on OPUS data, not here. Running on **{translator.device}** in **{translator.precision}** with
{total:,} parameters, in our own module tree (every view reads it through the same hooks).

""" + tables
    running = _("Running on **{device}** in **{precision}**{int8} with {n} parameters; {norm}.",
                device=translator.device, precision=translator.precision, n=_.number(total, 0),
                int8=" " + _("(feed-forward layers and output projection)") if translator.precision == "int8" else "",
                norm=_("pre-norm") if cfg.norm_first else _("post-norm (as in the paper)"))
    scored = _("**Test scores** (sacreBLEU; `test2016_*`: Multi30k test 2016; `tatoeba_test_*`: our held-out Tatoeba "
               "split, 2,000 English sentences with every translation as a reference):")
    headline = _("{title} checkpoint {name}", title=title, name=f"`{translator.name}`")
    trained = _("**Trained with**")
    return f"""### {headline}

{knows(metrics, _)}

{running}

{tables}
{scored}

| decoding | BLEU lowercased | BLEU cased | chrF |
| --- | ---: | ---: | ---: |
{scores}

{trained} {how}
"""


BRING = ("**Your own model.** A zip of a checkpoint folder (what `python -m transformer train --recipe FILE` "
         "writes) or of an OPUS-MT folder (what `MarianMTModel.save_pretrained` writes, with its tokenizer's files). "
         "It is checked first (safetensors only, never a pickle; at most 600 MB; weights that fit their config), then "
         "joins this page's language menu, in every view, until this page closes.")


class CardView(View):
    def build(self) -> None:
        self.brought = gr.Markdown(BRING, elem_id="brought")  # what it says, and what became of an upload
        self.bring = gr.UploadButton(_l("Bring your own model (.zip)"), file_types=[".zip"], size="sm",
                                     elem_id="bring-model")
        self.card = gr.Markdown(elem_id="model-card")
        self.pair_outputs = [self.card]

    def on_pair(self, translator, pair: str, values: dict) -> dict:
        title = None if pair in self.ctx.pairs else self.ctx.label(pair)  # an uploaded model: its name
        return {self.card: model_card(translator, pair, title, texts(values))}
