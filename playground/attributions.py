"""What the model used for one output token (transformer.interpret.attribution), drawn: every method's shares and
each token's share from the source. The What the model used view and the Lesson draw them. Never imports gradio."""
from __future__ import annotations

from transformer.errors import InputError
from transformer.translator import Translator
from transformer.interpret import analyses

from . import plots
from .pieces import METHOD_NAMES, shown
from .results import Result

LOW_SOURCE_SHARE = 0.5  # under this ALTI+ source share, a token is marked "continuing its own words"


def output_tokens(result: Result) -> list[str]:
    """What the decoder produced at each step: the translation's tokens, then </s>."""
    return result.translation.target_tokens + ["</s>"]


def explanation(translator: Translator, result: Result, step: int, alternative: int = -1, ig_steps: int = 64):
    """Every attribution of output token `step` (contrastive against `alternative` unless it is -1)."""
    n = len(output_tokens(result))
    if not 0 <= step < n:
        raise InputError(f"choose an output token between 0 and {n - 1}")
    return analyses.explain(translator, result.text, result.translation, step, None if alternative < 0 else alternative,
                              ig_steps)


def attribution_figure(expl):
    rows = [(METHOD_NAMES[m], a.source.tolist(), None if a.prefix is None else a.prefix.tolist())
            for m, a in expl.methods.items()]
    token = shown(expl.labels["output_tokens"][expl.step])
    return plots.attribution_rows(rows, expl.labels["source_tokens"], expl.labels["decoder_inputs"][: expl.step + 1],
                                  f"What output piece {expl.step + 1} ({token}) used: shares over the source, then the "
                                  "target prefix")


def source_share_figure(expl):
    labels = {"alti_plus": "ALTI+", "gradient_x_input": "gradient × input"}
    shares = {labels[m]: v for m, v in expl.source_share.items()}
    return plots.source_shares(expl.labels["output_tokens"], shares, LOW_SOURCE_SHARE, expl.step,
                               "How much of each token comes from the source (the rest: the target prefix)")


def continuing_own_words(expl) -> list[int]:
    """Steps whose ALTI+ source share is under LOW_SOURCE_SHARE (Dale et al. 2023: a sign of hallucination)."""
    return [t for t, v in enumerate(expl.source_share["alti_plus"]) if v < LOW_SOURCE_SHARE]
