"""What the decoder keeps (analyses.decoder_cache) at one step: every layer's self-attention cache, grown to that
step with the row added there marked, beside its cross-attention cache, made at the first step; their sizes; and the
same sentence decoded with and without the cache (analyses.cache_timing). Never imports gradio."""
from __future__ import annotations

import html

import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from transformer.interpret.analyses import CacheTiming, CacheTrace

from playground.pieces import named
from playground.i18n import ENGLISH, Texts
from .base import labels, laid_out, values

GAP = 4  # blank columns between a row's keys and its values


def keys_and_values(k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """One layer's cache, (H, n, Dh) keys and values, as rows of numbers: (n, H*Dh + GAP + H*Dh), every head's keys
    side by side, then every head's values."""
    n = k.size(1)
    flat = lambda t: t.permute(1, 0, 2).reshape(n, -1)  # noqa: E731  (H, n, Dh) -> (n, H, Dh) -> (n, H*Dh)
    return torch.cat([flat(k), torch.full((n, GAP), float("nan")), flat(v)], dim=1)


def cache_figure(trace: CacheTrace, step: int, _: Texts = ENGLISH) -> go.Figure:
    """Step `step` (from 0): a row per decoder layer, its self-attention cache (the rows so far, the newest outlined)
    beside its cross-attention cache (a row per source piece); keys on the left of each, values on the right."""
    L, t = len(trace.self_k), step + 1
    D = trace.self_k[0].size(0) * trace.self_k[0].size(2)  # H*Dh: one row's keys
    titles = [title for i in range(L) for title in (
        _.plural("layer {layer}: self-attention, {n} row", "layer {layer}: self-attention, {n} rows, one added now", t,
                 layer=i + 1),
        _("layer {layer}: cross-attention, made at step 1", layer=i + 1))]
    fig = make_subplots(rows=L, cols=2, subplot_titles=titles, horizontal_spacing=0.16, vertical_spacing=0.08 / L * 4)
    top = max(float(x.abs().max()) for x in trace.self_k + trace.self_v + trace.cross_k + trace.cross_v) or 1.0
    ticks = dict(tickvals=[D / 2, D + GAP + D / 2], ticktext=[_("keys"), _("values")])
    for i in range(L):
        for col, (k, v, pieces) in enumerate(((trace.self_k[i][:, :t], trace.self_v[i][:, :t], trace.target[:t]),
                                              (trace.cross_k[i], trace.cross_v[i], trace.source)), start=1):
            fig.add_trace(go.Heatmap(z=values(keys_and_values(k, v)), y=labels(pieces), colorscale="RdBu",
                                     zmid=0, zmin=-top, zmax=top, showscale=False,  # red below 0, blue above
                                     hovertemplate=_("%{y}<br>number %{x}: %{z:.2f}") + "<extra></extra>"),
                          row=i + 1, col=col)
            fig.update_xaxes(**ticks, row=i + 1, col=col)
        # the row this step added: the piece the decoder read now
        fig.add_shape(type="rect", x0=-0.5, x1=2 * D + GAP - 0.5, y0=t - 1.5, y1=t - 0.5,
                      line=dict(color="#e6550d", width=2), row=i + 1, col=1)
    fig.update_yaxes(autorange="reversed", tickfont=dict(size=11))
    rows = max(t, len(trace.source))
    title = _("Step {n}: the decoder read {read} and wrote {wrote}", n=t, read=named(trace.target, step, _),
              wrote=named(trace.outputs, step, _))
    return laid_out(fig, title, 60 + L * (30 + 13 * rows))


def size_table(trace: CacheTrace, step: int, _: Texts = ENGLISH) -> str:
    """The cache's sizes at step `step` (from 0), in numbers and bytes, per layer and in all, and what each does."""
    L = len(trace.self_shapes[step])
    H, n_self, Dh = trace.self_shapes[step][0]
    n_cross = trace.cross_shapes[step][0][1]
    per = trace.nbytes[step] // (2 * L * H * Dh * (n_self + n_cross))  # bytes a number
    body = "".join(f"<tr><td>{name}</td><td>{n} × {H} × {Dh} = {_.number(n * H * Dh, 0)}</td>"
                   f"<td>{_.number(2 * L * n * H * Dh * per / 1024, 1)} KB</td></tr>"
                   for name, n in ((_("self-attention"), n_self), (_("cross-attention"), n_cross)))
    made = (_("The cross-attention cache was made at step 1 from the encoder's output, the very same tensors at every "
              "step since.") if trace.cross_kept[step] and step else
            _("The cross-attention cache was made at step 1 from the encoder's output."))
    return ("<table class='cache-sizes'><caption>" + _("Kept after step {n}, in each of the {layers} layers", n=step + 1,
                                                       layers=L) + "</caption><tr><th>" + _("cache") + "</th><th>"
            + _("keys: rows × heads × numbers") + "</th><th>" + _("keys and values, all layers") + f"</th></tr>{body}"
            + "<tr><td><b>" + _("in all") + "</b></td><td>" + _("{n} bytes a number", n=per) + "</td><td><b>"
            + f"{_.number(trace.nbytes[step] / 1024, 1)} KB</b></td></tr></table><p class='small'>"
            + _("The self-attention cache grows by one row a step: step {n} added the piece it read.", n=step + 1)
            + f" {made} " + _("Values have the keys' shape.") + "</p>")


def timing_text(timing: CacheTiming, _: Texts = ENGLISH) -> str:
    """The two decodings, timed, in words (escaped)."""
    same = timing.with_cache == timing.without_cache
    written = _.quoted(html.escape(timing.with_cache))
    return ("<p>" + _("Decoded just now on this server, {n} steps each way (the faster of three runs): <b>with the "
                      "cache {cached} ms</b>, <b>without it {uncached} ms</b>: {ratio} times as long.", n=timing.steps,
                      cached=_.number(1000 * timing.cached_s, 1), uncached=_.number(1000 * timing.uncached_s, 1),
                      ratio=_.number(timing.ratio, 1)) + " "
            + (_("Both wrote the same translation: {text}", text=written) if same else
               _("They wrote different translations (which they should not: please report it): {text}", text=written))
            + "</p><p class='small'>"
            + _("Without the cache, step t runs the decoder over all t pieces again (1 + 2 + … + T positions in all), "
                "with it over one: the longer the translation, the more the cache saves. A short sentence saves "
                "little, since each step also pays for work the cache cannot spare (the output layer, the attention "
                "over the keys kept).") + "</p>")
