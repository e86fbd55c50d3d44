"""Model card: config, parameters per component, test scores, device and how the checkpoint was trained."""
from __future__ import annotations

import gradio as gr

from playground import figures

from .common import View


TATOEBA_CREDIT = "Sentence pairs from the Tatoeba Project (tatoeba.org), via manythings.org/anki, CC BY 2.0."


def stages(metrics: dict) -> list[dict]:
    """The training stages, first to last: a later stage keeps the one it started from under "first_stage"."""
    chain = []
    while metrics:
        chain.append(metrics)
        metrics = metrics.get("first_stage") or {}
    return chain[::-1]


def knows(metrics: dict) -> str:
    """What the checkpoint was trained on, and so what kind of text it translates well, in plain sentences."""
    commands = " ".join(stage.get("command") or "" for stage in stages(metrics))
    typed = any((stage.get("train_config") or {}).get("source_noise") for stage in stages(metrics))
    if "tatoeba" in commands:
        return ("**What it knows:** Multi30k's picture captions and Tatoeba's everyday sentences"
                + (", also typed without capitals or full stops" if typed else "") + ". It translates "
                "short, plain sentences well (what people do, say and ask, what a picture shows); long, technical "
                "or rare words poorly. " + TATOEBA_CREDIT)
    return ("**What it knows:** Multi30k's picture captions only. It translates short descriptions of a picture "
            "well; everyday conversation and anything else poorly.")


def model_card(translator, pair: str) -> str:
    """The checkpoint in Markdown: device, parameters per component, config, test scores, how it was trained."""
    cfg, metrics = translator.cfg, translator.metrics
    breakdown = figures.parameter_breakdown(translator)
    total = sum(n for _, n in breakdown)
    rows = "\n".join(f"| {name} | {n:,} | {100 * n / total:.1f}% |" for name, n in breakdown)
    config = "\n".join(f"| `{k}` | {v} |" for k, v in cfg.to_dict().items())
    test = metrics.get("test", {})
    scores = "\n".join(f"| {name} | {s.get('bleu_lc', float('nan')):.2f} | {s.get('bleu', float('nan')):.2f} | "
                       f"{s.get('chrf', float('nan')):.2f} |" for name, s in test.items()) or "| (not recorded) | | | |"
    how = "\n".join(f"{i}. `{stage.get('command') or 'unknown command'}`"
                     + (f" ({stage['train_wall_s'] / 60:.0f} minutes of steps)" if stage.get("train_wall_s") else "")
                     for i, stage in enumerate(stages(metrics), 1))
    how = f"{len(stages(metrics))} stage(s), the last on {metrics.get('hardware', 'unknown hardware')}:\n\n{how}"
    tables = f"""| component | parameters | share |
| --- | ---: | ---: |
{rows}

| config | value |
| --- | --- |
{config}
"""
    imported = metrics.get("imported")
    if imported:  # an OPUS-MT model: where it came from and under which licence, not how we trained it
        return f"""### {pair} `{translator.name}`: imported

Imported from **{imported['source']}** ({imported['architecture']}), licence **{imported['licence']}**; trained by
its authors on OPUS data, not here. Running on **{translator.device}** in **{translator.precision}** with
{total:,} parameters, in our own module tree (every view reads it through the same hooks).

""" + tables
    return f"""### {pair.upper()} checkpoint `{translator.name}`

{knows(metrics)}

Running on **{translator.device}** in **{translator.precision}**{' (feed-forward layers and output projection)' if translator.precision == 'int8' else ''} with {total:,} parameters; {'pre-norm' if cfg.norm_first else 'post-norm (as in the paper)'}.

{tables}
**Test scores** (sacreBLEU; `test2016_*`: Multi30k test 2016; `tatoeba_test_*`: our held-out Tatoeba split, 2,000
English sentences with every translation as a reference):

| decoding | BLEU lowercased | BLEU cased | chrF |
| --- | ---: | ---: | ---: |
{scores}

**Trained with** {how}.
"""


class CardView(View):
    def __init__(self):
        with gr.Tab("Model card") as self.tab:
            self.notice()
            self.card = gr.Markdown()
        self.pair_outputs = [self.card]

    def on_pair(self, translator, pair: str, values: dict) -> dict:
        return {self.card: model_card(translator, pair)}
