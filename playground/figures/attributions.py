"""What the model used for one output token (transformer.interpret.attribution), drawn: every method's shares and
each token's share from the source. The What the model used view and the Lesson draw them. Never imports gradio."""
from __future__ import annotations

from transformer.errors import InputError
from transformer.translator import Translator
from transformer.interpret import analyses

from playground.pieces import METHOD_NAMES, shown
from playground.context import Result

import html

import plotly.graph_objects as go


from playground.i18n import ENGLISH, N_, Texts
from .base import SCALE, labels, laid_out, wrapped


def method_label(name: str) -> str:
    """A method's name as its row is labelled: escaped, in two lines when a language names it at length (a phone's
    figure leaves its labels a third of its width)."""
    return wrapped(name, 24)[0]


def attribution_rows(rows: list[tuple[str, list[float], list[float] | None]], source_tokens: list[str],
                     prefix_tokens: list[str], title: str, _: Texts = ENGLISH) -> go.Figure:
    """One row per method: its shares over the source tokens, then over the target prefix (blank where a method
    does not look at the prefix); a line separates the two."""
    S = len(source_tokens)
    source, target = _("src"), _("tgt")
    x = [f"{source} {label}" for label in labels(source_tokens)] + [f"{target} {label}" for label in labels(prefix_tokens)]
    z = [list(src) + (list(prefix) if prefix is not None else [None] * len(prefix_tokens)) for _name, src, prefix in rows]
    y = [method_label(name) for name, *_rest in rows]
    fig = go.Figure(go.Heatmap(z=z, x=x, y=y, colorscale=SCALE, zmin=0, texttemplate="%{z:.2f}", textfont=dict(size=11), xgap=1, ygap=1,
                               colorbar=dict(title=dict(text=_("share"), side="right")),
                               hovertemplate=_("%{y}<br>%{x}<br>share %{z:.3f}") + "<extra></extra>"))
    fig.add_vline(x=S - 0.5, line=dict(color="#e6550d", width=3))
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(tickangle=-45)
    return laid_out(fig, title, 160 + 46 * len(rows))


def source_shares(output_tokens: list[str], shares: dict[str, list[float]], low: float, chosen: int,
                  title: str, _: Texts = ENGLISH) -> go.Figure:
    """Per output token, the share of its prediction that comes from the source (one trace per method); tokens
    under `low` by the first method are marked "continuing its own words", the chosen step is outlined."""
    x = labels(output_tokens)
    fig = go.Figure()
    (first, main), *others = shares.items()
    colors = ["#e6550d" if v < low else "#3182bd" for v in main]
    fig.add_trace(go.Bar(x=x, y=main, name=html.escape(first), marker=dict(color=colors, line=dict(
        width=[3 if t == chosen else 0 for t in range(len(x))], color="#252525")),
        hovertemplate=_("%{x}<br>source share %{y:.2f}") + "<extra>%{fullData.name}</extra>"))
    for name, v in others:
        fig.add_trace(go.Scatter(x=x, y=v, mode="lines+markers", name=html.escape(name),
                                 hovertemplate=_("%{x}<br>source share %{y:.2f}") + "<extra>%{fullData.name}</extra>"))
    fig.add_hline(y=low, line=dict(dash="dot", color="#e6550d"), annotation_position="bottom right",
                  annotation_text=_("below {share}: continuing its own words", share=_.percent(low)))
    fig.update_yaxes(range=[0, 1], title_text=_("from the source"))
    fig.update_xaxes(tickangle=-45)
    # no legend (under the plot, a long piece's slanted label ran into it): the title names the bars and the lines
    fig.update_layout(showlegend=False)
    lines = ", ".join(html.escape(name) for name, _v in others)
    named = (_("bars: {bars}; lines: {lines}", bars=html.escape(first), lines=lines) if others
             else _("bars: {bars}", bars=html.escape(first)))
    return laid_out(fig, f"{title} ({named})", 380)



LOW_SOURCE_SHARE = 0.5  # under this ALTI+ source share, a token is marked "continuing its own words"


def output_tokens(result: Result) -> list[str]:
    """What the decoder produced at each step: the translation's tokens, then </s>."""
    return result.translation.target_tokens + ["</s>"]


def explanation(translator: Translator, result: Result, step: int, alternative: int = -1, ig_steps: int = 64):
    """Every attribution of output token `step` (contrastive against `alternative` unless it is -1)."""
    n = len(output_tokens(result))
    if not 0 <= step < n:
        raise InputError(N_("choose an output token between 0 and {last}"), last=n - 1)
    return analyses.explain(translator, result.text, result.translation, step, None if alternative < 0 else alternative,
                              ig_steps)


def attribution_figure(expl, _: Texts = ENGLISH):
    rows = [(_(METHOD_NAMES[m]), a.source.tolist(), None if a.prefix is None else a.prefix.tolist())
            for m, a in expl.methods.items()]
    token = shown(expl.labels["output_tokens"][expl.step])
    return attribution_rows(rows, expl.labels["source_tokens"], expl.labels["decoder_inputs"][: expl.step + 1],
                            _("What output piece {n} ({piece}) used: shares over the source, then the target prefix",
                              n=expl.step + 1, piece=token), _=_)


def source_share_figure(expl, _: Texts = ENGLISH):
    shares = {_(METHOD_NAMES[m]): v for m, v in expl.source_share.items()}
    return source_shares(expl.labels["output_tokens"], shares, LOW_SOURCE_SHARE, expl.step,
                         _("How much of each token comes from the source (the rest: the target prefix)"), _=_)


def continuing_own_words(expl) -> list[int]:
    """Steps whose ALTI+ source share is under LOW_SOURCE_SHARE (Dale et al. 2023: a sign of hallucination)."""
    return [t for t, v in enumerate(expl.source_share["alti_plus"]) if v < LOW_SOURCE_SHARE]
