"""What one output token used: attributions over the source tokens and the target prefix.

Each method is normalised to sum to 1 over the S source tokens and the t + 1 decoder inputs (<s> and the tokens
before the chosen one); every number comes from hooks on the real modules, or autograd through them:
- attention: the last decoder layer's cross-attention row, heads averaged (source only), for comparison;
- attention x norm (Kobayashi et al. 2020): ||sum over heads of alpha * v W^O||, the norm of what each key adds
  to the block's output (its heads' vectors summed first), from the last decoder layer's cross-attention (source)
  and self-attention (prefix), read by hooks (capture_internals);
- gradient x input: ||d log p(token) / d embedding  (*)  embedding|| per token, by autograd through the real
  model, the embeddings read by a forward hook on the embedding module;
- integrated gradients (Sundararajan et al. 2017), by Captum, from a zero-embedding baseline, per token the
  absolute value of its attributions' sum over d_model (the sums add up to f(input) - f(baseline)); the model runs
  on Captum's interpolated embeddings through a hook that replaces the embedding module's output;
- ALTI+ (Ferrando et al. 2022): each attention block's output split into one vector per input token (alpha * v W^O
  per key, the residual merged into the token's own vector in self-attention and kept apart in cross-attention),
  scored by how close each is to the block's output (L1), through post-norm layer norms where the model has them,
  and rolled out through the encoder, then through every decoder layer;
- attention rollout (Abnar & Zuidema 2020), carried through the decoder the same way, with attention in place of
  ALTI's contributions (half to the residual, half to the attended tokens).
Contrastive (gradient methods): the attribution of log p(token) - log p(alternative).
Deletion test: hide each method's top-k source tokens from every cross-attention (capture.hide_source) and
measure how far p(token) falls, against hiding k random source tokens.

Shape legend: S source length, T decoder inputs (<s> + translation), D d_model, H heads, Dh head size.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from .capture import capture_internals, hide_source, hooks, record
from ..errors import InputError
from .mechanics import chain, rollout

METHODS = ("attention", "attention_norm", "gradient_x_input", "integrated_gradients", "alti_plus", "rollout")
NEED_GRADIENTS = ("gradient_x_input", "integrated_gradients")  # what a model without gradients (int8) cannot give
IG_STEPS = (1, 256)  # the integrated-gradient steps a caller may ask for: (fewest, most). One point is a crude but
# valid integral, and a number typed digit by digit (1, 12, 128) is then a request at every keystroke, never an error
DELETION_KS = (1, 2, 3)


@dataclass
class Attribution:
    """One method's shares of one output token: over the source, then over the decoder's inputs up to it
    (None for a method that sees only the source)."""

    source: Tensor  # (S,)
    prefix: Tensor | None  # (t + 1,)

    @property
    def source_share(self) -> float:
        return float(self.source.sum())

    def to_dict(self) -> dict:
        return {"source": _rounded(self.source), "prefix": None if self.prefix is None else _rounded(self.prefix)}


def _rounded(x: Tensor) -> list[float]:
    return [round(float(v), 5) for v in x]


def _normalised(source: Tensor, prefix: Tensor) -> Attribution:
    total = (source.sum() + prefix.sum()).clamp_min(1e-12)
    return Attribution(source / total, prefix / total)


def _check_step(src: Tensor, tgt_in: Tensor, step: int) -> None:
    if src.size(0) != 1 or tgt_in.size(0) != 1:
        raise InputError("attributions explain one sentence at a time")
    if not 0 <= step < tgt_in.size(1):
        raise InputError(f"choose an output step between 0 and {tgt_in.size(1) - 1} (got {step})")


# -----------------------------------------------------------------------------
# Attention, and attention weighted by what the values carry


def cross_attention(model, src: Tensor, tgt_in: Tensor, step: int) -> Attribution:
    """The last decoder layer's cross-attention row at `step`, heads averaged: what the attention views show."""
    _check_step(src, tgt_in, step)
    return contributions(model, src, tgt_in).attribution("attention", step)


def attention_norm(model, src: Tensor, tgt_in: Tensor, step: int) -> Attribution:
    """src (1, S), tgt_in (1, T); step t: the token predicted at decoder position t."""
    _check_step(src, tgt_in, step)
    return contributions(model, src, tgt_in).attribution("attention_norm", step)


def _per_key(block, seen) -> Tensor:
    """(Tq, Tk, D): what each key adds to each query's attention output, alpha * v W^O summed over heads
    (the output is their sum plus W^O's bias)."""
    H, _, Dh = seen.v.shape
    w_o = block.w_o.weight.detach().float().cpu().view(-1, H, Dh)  # (D, H, Dh): W^O's slice per head
    return torch.einsum("hqk,hkd,ehd->qke", seen.probs, seen.v, w_o)


# -----------------------------------------------------------------------------
# Gradients: torch.autograd.grad with respect to the embeddings (the model's .grad is never written, so concurrent
# requests on the served model cannot see each other's), projecting only the position each row asks about

TOKEN_BUDGET = 4096  # rows x (source + target) tokens in one batched gradient pass: bounds its memory


def has_gradients(model) -> bool:
    """False for a model with int8 (dynamically quantized) layers: their kernels have no gradient."""
    return not any(type(m).__module__.startswith("torch.ao.nn.quantized") for m in model.modules())


def _check_gradients(model) -> None:
    if not has_gradients(model):
        raise InputError("gradient × input and integrated gradients need gradients, which the int8 layers do not "
                         "have; load the model without int8 to see them")


def _log_prob_gap(log_probs: Tensor, token: int, alternative: int | None) -> Tensor:
    """(B,) log p(token), or log p(token) - log p(alternative) for the contrastive question; log_probs (B, V)."""
    out = log_probs[:, token]
    return out if alternative is None else out - log_probs[:, alternative]


def _rows(budget_rows: int, n: int) -> list[Tensor]:
    return list(torch.arange(n).split(max(1, budget_rows)))


def _grad_x_input(model, src: Tensor, tgt_in: Tensor, at: Tensor, objective) -> tuple[Tensor, Tensor]:
    """||d objective / d embedding (*) embedding|| per embedded token, for N rows that each ask about decoder position
    at[n]: objective maps the (N, V) log-probabilities to (N,). Returns (N, S) and (N, T), fp32 on the CPU."""
    N = at.numel()
    embedded = [x.expand(N, -1, -1).clone().requires_grad_() for x in _embeddings(model, src, tgt_in)]
    with torch.enable_grad(), hooks(model, {"embed": replaced(embedded)}):
        log_probs = model.log_probs_at(src.expand(N, -1), tgt_in.expand(N, -1), at.to(src.device))  # (N, V)
        grads = torch.autograd.grad(objective(log_probs).sum(), embedded)
    return tuple((g * e).detach().norm(dim=-1).float().cpu() for g, e in zip(grads, embedded))  # (N, S), (N, T)


def gradient_x_input(model, src: Tensor, tgt_in: Tensor, step: int, token: int,
                     alternative: int | None = None) -> Attribution:
    """||grad (*) input|| of log p(token) (minus log p(alternative)) at decoder position `step`, per embedded
    source and decoder token."""
    _check_step(src, tgt_in, step)
    _check_gradients(model)
    source, target = _grad_x_input(model, src, tgt_in, torch.tensor([step]),
                                   lambda lp: _log_prob_gap(lp, token, alternative))
    return _normalised(source[0], target[0, : step + 1])


def gradient_source_shares(model, src: Tensor, tgt_in: Tensor, chosen: list[int]) -> Tensor:
    """(T,): every step's source share by gradient x input. Row t of a batch of copies answers for step t (rows do
    not interact, so each row's gradient is that step's own), in as few passes as TOKEN_BUDGET allows."""
    _check_gradients(model)
    T = tgt_in.size(1)
    chosen_ids = torch.tensor(chosen, device=src.device)
    shares = []
    for rows in _rows(TOKEN_BUDGET // (src.size(1) + T), T):
        source, target = _grad_x_input(model, src, tgt_in, rows,
                                       lambda lp, rows=rows: lp[torch.arange(len(rows)), chosen_ids[rows]])
        prefix = (target * (torch.arange(T)[None, :] <= rows[:, None])).sum(dim=-1)  # row t: decoder inputs 0..t
        shares.append(source.sum(dim=-1) / (source.sum(dim=-1) + prefix).clamp_min(1e-12))
    return torch.cat(shares)


@dataclass
class IntegratedGradients:
    attribution: Attribution
    total: float  # the attributions' sum: by completeness, f(input) - f(baseline)
    delta: float  # Captum's convergence delta: total - (f(input) - f(baseline))
    steps: int

    @property
    def gap(self) -> float:
        """f(input) - f(baseline), f = log p(token) (- log p(alternative))."""
        return self.total - self.delta

    @property
    def completeness_error(self) -> float:
        return abs(self.delta)


@torch.no_grad()
def _embeddings(model, src: Tensor, tgt_in: Tensor) -> tuple[Tensor, Tensor]:
    """The embedded source (1, S, D) and decoder inputs (1, T, D), read by a hook in one forward pass."""
    with record(model, ["embed"]) as seen:
        model.log_probs_at(src, tgt_in, torch.zeros(src.size(0), dtype=torch.long, device=src.device))
    return seen["embed"][0].to(src.device), seen["embed"][1].to(src.device)


def replaced(outputs: list[Tensor]):
    """A hook for `hooks` under which the module's i-th call gives outputs[i] instead of what it computed: the model
    runs on chosen embeddings this way (the encoder embeds the source first, then the decoder its inputs)."""
    calls = itertools.count()

    def replace(module, inputs, output):
        i = next(calls)
        return outputs[i] if i < len(outputs) else output
    return replace


def integrated_gradients(model, src: Tensor, tgt_in: Tensor, step: int, token: int, alternative: int | None = None,
                         n_steps: int = 64) -> IntegratedGradients:
    """Integrated gradients of log p(token) (minus log p(alternative)) from the all-zero embedding, by Captum's
    IntegratedGradients (Gauss-Legendre points); the model reads the interpolated embeddings through a hook on its
    embedding module, so the positional encoding and everything after it are the model's own. Only position `step`
    is projected, and the interpolation points go through in batches within TOKEN_BUDGET."""
    from captum.attr import IntegratedGradients as CaptumIG

    _check_step(src, tgt_in, step)
    _check_gradients(model)
    if not IG_STEPS[0] <= int(n_steps) <= IG_STEPS[1]:
        raise InputError(f"integrated gradients take between {IG_STEPS[0]} and {IG_STEPS[1]} steps (got {n_steps})")
    tgt_in = tgt_in[:, : step + 1]  # positions after `step` cannot change its prediction

    def forward(src_emb: Tensor, tgt_emb: Tensor) -> Tensor:  # (N, S, D), (N, T, D) -> (N,)
        N = src_emb.size(0)
        with hooks(model, {"embed": replaced([src_emb, tgt_emb])}):
            log_probs = model.log_probs_at(src.expand(N, -1), tgt_in.expand(N, -1),
                                           torch.full((N,), step, device=src.device))  # (N, V)
        return _log_prob_gap(log_probs, token, alternative)

    inputs = _embeddings(model, src, tgt_in)
    baselines = tuple(torch.zeros_like(x) for x in inputs)
    batch = max(1, min(int(n_steps), TOKEN_BUDGET // (src.size(1) + step + 1)))
    with torch.enable_grad():
        (src_attr, tgt_attr), delta = CaptumIG(forward).attribute(
            inputs, baselines, n_steps=int(n_steps), internal_batch_size=batch, return_convergence_delta=True)
    total = float(src_attr.sum() + tgt_attr.sum())
    per_token = [x[0].sum(dim=-1).abs().detach().float().cpu() for x in (src_attr, tgt_attr)]  # (S,), (T,)
    shares = _normalised(*per_token)  # each token's |sum over d_model|: the sums are what completeness adds up
    return IntegratedGradients(shares, total, float(delta.sum()), int(n_steps))


# -----------------------------------------------------------------------------
# ALTI+ and attention rollout: token-to-token contributions, layer by layer, rolled out


def self_parts(resid: Tensor, per_key: Tensor) -> Tensor:
    """Self-attention's parts, ALTI's way: resid (T, D) is merged into each token's own part, T_i(x_i) + x_i,
    before anything is measured (Ferrando et al. 2022, eq. 6). per_key (T, T, D) -> (T, T, D)."""
    T = per_key.size(0)
    return per_key + torch.eye(T, dtype=per_key.dtype)[:, :, None] * resid[:, None, :]


def cross_parts(resid: Tensor, per_key: Tensor) -> Tensor:
    """Cross-attention's parts, ALTI+'s way: the residual (T, D) stays a part of its own, first, beside each
    source token's alpha v W^O (T, S, D) -> (T, 1 + S, D): it is the target side's share of the block."""
    return torch.cat([resid[:, None], per_key], dim=1)


def through_norm(parts: Tensor, bias: Tensor, y: Tensor, norm: nn.LayerNorm | None) -> tuple[Tensor, Tensor]:
    """The parts (Tq, N, D) as the block's output sees them, and that output.

    y (Tq, D) = parts summed + bias is what the block adds up. Pre-norm: the output is y itself. Post-norm: a layer
    norm is linear once its standard deviation sigma(y) is fixed, so each part maps to
    L(part) = gamma * (part - mean(part)) / sigma(y), and LN(y) = sum of L(parts) + L(bias) + beta."""
    if norm is None:
        return parts, y
    gamma, beta = norm.weight.detach().float().cpu(), norm.bias.detach().float().cpu()
    sigma = (y.var(dim=-1, unbiased=False, keepdim=True) + norm.eps).sqrt()  # (Tq, 1): as the LayerNorm computes it
    transformed = (parts - parts.mean(dim=-1, keepdim=True)) / sigma[:, None] * gamma  # (Tq, N, D)
    out = transformed.sum(dim=1) + (bias - bias.mean()) / sigma * gamma + beta  # (Tq, D) = LN(y)
    return transformed, out


def alti_scores(parts: Tensor, out: Tensor) -> Tensor:
    """ALTI's contributions: c_ij = max(0, ||y_i||_1 - ||y_i - part_ij||_1), normalised per row.
    parts (Tq, N, D), out (Tq, D) -> (Tq, N)."""
    c = (out.abs().sum(dim=-1, keepdim=True) - (out[:, None] - parts).abs().sum(dim=-1)).clamp_min(0)
    return c / c.sum(dim=-1, keepdim=True).clamp_min(1e-12)


def decoder_rollout(encoder: Tensor, selfs: list[Tensor], crosses: list[Tensor]) -> Tensor:
    """Roll token contributions out through the decoder (ALTI+'s composition).

    encoder (S, S): each encoder output's contributions from the source tokens; per decoder layer, selfs (T, T) its
    self-attention block's and crosses (T, 1 + S) its cross-attention block's (the residual first). The feed-forward
    sublayers work token by token and move nothing between tokens. Returns (T, S + T): each decoder position's
    contributions from the source tokens, then from the decoder's inputs; every row sums to 1.
    """
    S, T = encoder.size(0), selfs[0].size(0) if selfs else 0
    rolled = torch.cat([torch.zeros(T, S), torch.eye(T)], dim=1)  # (T, S + T): each input is itself
    memory = torch.cat([encoder, torch.zeros(S, T)], dim=1)  # (S, S + T)
    for self_c, cross_c in zip(selfs, crosses):
        rolled = self_c @ rolled  # (T, S + T)
        rolled = cross_c[:, :1] * rolled + cross_c[:, 1:] @ memory
    return rolled


REBUILD_TOLERANCE = 1e-3  # largest |rebuilt - hooked| allowed, relative to the hooked tensor's largest entry


def _block_streams(model) -> tuple[list[str], dict]:
    """The modules (by name) whose inputs and outputs ALTI+ reads, and where each block's residual, sum and norm are:
    (kind, layer) -> (residual, sum, norm after the sum or None), each a (module name, "in" | "out").
    Post-norm: y = x + Attn(x) enters the block's own norm. Pre-norm: y = x + Attn(LN(x)) enters the next norm."""
    enc, dec = list(model.encoder.layers), list(model.decoder.layers)
    post = not model.cfg.norm_first
    where = {}
    for i, layer in enumerate(enc):
        at = f"encoder.layers.{i}"
        where["encoder", i] = (((at, "in"), (f"{at}.norm_1", "in"), layer.norm_1) if post else
                               ((f"{at}.norm_1", "in"), (f"{at}.norm_2", "in"), None))
    for i, layer in enumerate(dec):
        at = f"decoder.layers.{i}"
        if post:
            where["decoder", i] = ((at, "in"), (f"{at}.norm_1", "in"), layer.norm_1)
            where["cross", i] = ((f"{at}.norm_1", "out"), (f"{at}.norm_2", "in"), layer.norm_2)
        else:
            where["decoder", i] = ((f"{at}.norm_1", "in"), (f"{at}.norm_2", "in"), None)
            where["cross", i] = ((f"{at}.norm_2", "in"), (f"{at}.norm_3", "in"), None)
    names = sorted({name for streams in where.values() for name, _ in streams[:2]})
    return names, where


@dataclass
class Contributions:
    """What one hooked teacher-forced pass says of every decoder position t (predicting token t + 1): per method,
    (T, S + T) over the source tokens, then the decoder's inputs (rows sum to 1; the attention row (T, S) covers the
    source only)."""

    attention: Tensor  # the last layer's cross-attention, heads averaged
    attention_norm: Tensor  # the last layer's ||sum over heads of alpha v W^O||, cross-attention then self-attention
    alti_plus: Tensor
    rollout: Tensor
    n_source: int
    layers: dict = field(default_factory=dict)  # (kind, layer) -> ALTI's (Tq, N) contributions of that block
    rebuild_error: float = 0.0  # largest |parts summed + bias - the hooked sum| over every block
    norm_error: float = 0.0  # largest |L(parts) summed + L(bias) + beta - the hooked LN(y)| (post-norm blocks)

    def attribution(self, method: str, step: int) -> Attribution:
        row = getattr(self, method)[step]
        prefix = row[self.n_source : self.n_source + step + 1] if row.numel() > self.n_source else None
        return Attribution(row[: self.n_source], prefix)

    def source_share(self, method: str = "alti_plus") -> Tensor:
        """(T,): how much of each step's prediction comes from the source rather than the prefix."""
        return getattr(self, method)[:, : self.n_source].sum(dim=-1)


@torch.inference_mode()
def contributions(model, src: Tensor, tgt_in: Tensor) -> Contributions:
    """Attention, attention x norm, ALTI+ and attention rollout from one hooked pass: every attention block's
    probabilities, values and W^O (capture_internals), and what enters and leaves every layer and layer norm.

    ALTI+ (Ferrando et al. 2022): each block's sum y_i = x_i + sum_j alpha_ij v_j W^O + b^O is split into one part
    per input; in self-attention the residual x_i joins token i's own part, in cross-attention it stays apart (the
    target prefix's share). Parts go through the post-norm layer norm where there is one, are scored by alti_scores,
    and are rolled out through the encoder, then through every decoder layer. The parts are checked against the
    hooked sums (and layer-norm outputs) before anything is scored."""
    _check_step(src, tgt_in, 0)
    names, where = _block_streams(model)
    with capture_internals(model) as recorder, record(model, names, inputs=True) as calls:
        model(src, tgt_in)
    inside = recorder.sentence(0)
    # (N, D): the first call's first input, or its output, of sentence 0
    seen = {"in": lambda name: calls[name][0][0][0][0], "out": lambda name: calls[name][0][1][0]}
    blocks = model.attention_blocks()

    per_keys, layers, errors = {}, {}, {"rebuild": 0.0, "norm": 0.0}
    for (kind, i), ((r, r_side), (y, y_side), norm) in where.items():
        attn = blocks[kind][i]
        per_key = per_keys[(kind, i)] = _per_key(attn, inside[kind][i])  # (Tq, Tk, D)
        resid, hooked = seen[r_side](r), seen[y_side](y)  # (Tq, D) each
        parts = cross_parts(resid, per_key) if kind == "cross" else self_parts(resid, per_key)
        bias = attn.w_o.bias.detach().float().cpu()
        errors["rebuild"] = max(errors["rebuild"], _check(parts.sum(dim=1) + bias, hooked, f"{kind} {i} sum"))
        transformed, out = through_norm(parts, bias, hooked, norm)
        if norm is not None:
            errors["norm"] = max(errors["norm"], _check(out, seen["out"](y), f"{kind} {i} layer norm"))
        layers[(kind, i)] = alti_scores(transformed, out)
    n_enc, n_dec = len(blocks["encoder"]), len(blocks["decoder"])
    alti = decoder_rollout(chain([layers["encoder", i] for i in range(n_enc)]),
                           [layers["decoder", i] for i in range(n_dec)], [layers["cross", i] for i in range(n_dec)])

    att = {kind: torch.stack([inside[kind][i].probs for i in range(len(blocks[kind]))]) for kind in blocks}
    T = tgt_in.size(1)
    att_selfs = [(a.mean(dim=0) + torch.eye(T)) / 2 for a in att["decoder"]]  # (T, T): rows sum to 1
    att_crosses = [torch.cat([torch.full((T, 1), 0.5), a.mean(dim=0) / 2], dim=1) for a in att["cross"]]  # (T, 1+S)
    rolled = decoder_rollout(rollout(att["encoder"]), att_selfs, att_crosses)
    last = n_dec - 1
    norms = torch.cat([per_keys[("cross", last)].norm(dim=-1), per_keys[("decoder", last)].norm(dim=-1)], dim=1)
    norms = norms / norms.sum(dim=-1, keepdim=True).clamp_min(1e-12)  # (T, S + T): later positions have alpha 0
    return Contributions(att["cross"][-1].mean(dim=0), norms, alti, rolled, src.size(1), layers,
                         errors["rebuild"], errors["norm"])


def _check(rebuilt: Tensor, hooked: Tensor, what: str) -> float:
    """|rebuilt - hooked| at its largest; a decomposition that does not add up to what the model computed is a bug."""
    error = float((rebuilt - hooked).abs().max())
    if error > REBUILD_TOLERANCE * max(float(hooked.abs().max()), 1.0):
        raise RuntimeError(f"ALTI+: the {what} rebuilt from its parts is off by {error:.2g} from the hooked one")
    return error


# -----------------------------------------------------------------------------
# Deletion: which explanation is faithful


@dataclass
class Deletion:
    """How far p(token) falls when each method's top-k source tokens are hidden from the cross-attention."""

    prob: float  # p(token) with every source token visible
    ks: list[int]
    drops: dict[str, list[float]]  # method -> per k: prob - p(token) with its top-k hidden
    random: list[float]  # per k: the mean drop over `draws` random sets of k source tokens
    draws: int

    def most_faithful(self) -> str:
        """The method whose top tokens matter most: the largest drop summed over k."""
        return max(self.drops, key=lambda m: sum(self.drops[m]))

    def to_dict(self) -> dict:
        return {"prob": round(self.prob, 6), "ks": self.ks, "draws": self.draws,
                "drops": {m: [round(d, 6) for d in v] for m, v in self.drops.items()},
                "random": [round(d, 6) for d in self.random], "most_faithful": self.most_faithful()}


@torch.inference_mode()
def deletion_test(model, src: Tensor, tgt_in: Tensor, step: int, token: int, rankings: dict[str, Tensor],
                  ks=DELETION_KS, draws: int = 10, seed: int = 0) -> Deletion:
    """rankings: per method, a score per source token (S,), highest first hidden. One batched forward pass:
    every (method, k) and every random draw is a row, its hidden tokens masked by hooks (capture.hide_source)."""
    _check_step(src, tgt_in, step)
    S = src.size(1)
    real = src[0].ne(model.cfg.pad_id).cpu()  # (S,)
    n_real = int(real.sum())
    ks = [k for k in ks if k < n_real] or [max(n_real - 1, 0)]
    g = torch.Generator().manual_seed(seed)
    masks = [torch.ones(S, dtype=torch.bool)]  # row 0: nothing hidden
    for scores in rankings.values():
        order = scores.float().masked_fill(~real, float("-inf")).argsort(descending=True)
        for k in ks:
            masks.append(torch.ones(S, dtype=torch.bool).index_fill(0, order[:k], False))
    candidates = real.nonzero().squeeze(1)
    for k in ks:
        for _ in range(draws):
            pick = candidates[torch.randperm(n_real, generator=g)[:k]]
            masks.append(torch.ones(S, dtype=torch.bool).index_fill(0, pick, False))
    keep = torch.stack(masks).to(src.device)  # (N, S)
    N = keep.size(0)
    with hide_source(model, keep):
        log_probs = model.log_probs_at(src.expand(N, -1), tgt_in[:, : step + 1].expand(N, -1),
                                       torch.full((N,), step, device=src.device))  # (N, V)
    probs = log_probs[:, token].exp().float().cpu()  # (N,)
    drops = (probs[0] - probs[1:]).tolist()
    n_k = len(ks)
    by_method = {m: drops[i * n_k : (i + 1) * n_k] for i, m in enumerate(rankings)}
    rand = torch.tensor(drops[len(rankings) * n_k :]).view(n_k, draws).mean(dim=1)  # (k, draws) -> (k,)
    return Deletion(float(probs[0]), ks, by_method, rand.tolist(), draws)


# -----------------------------------------------------------------------------
# Everything about one output token


@dataclass
class Explanation:
    """What the model used for one output token, by every method, with the deletion test and, for the whole
    output, each step's source share."""

    step: int
    token: int
    alternative: int | None
    methods: dict[str, Attribution]
    integrated: IntegratedGradients | None  # None on a model without gradients (int8)
    deletion: Deletion
    source_share: dict[str, list[float]]  # "alti_plus" and, with gradients, "gradient_x_input": per step (T,)
    labels: dict[str, list[str]] = field(default_factory=dict)  # "source", "target": the tokens, when known
    unavailable: tuple[str, ...] = ()  # the methods this model cannot give (those that need gradients, on int8)

    def to_dict(self) -> dict:
        ig = self.integrated
        return {"step": self.step, "token": self.token, "alternative": self.alternative, **self.labels,
                "methods": {m: a.to_dict() for m, a in self.methods.items()},
                "integrated_gradients": ig and {"steps": ig.steps, "sum": round(ig.total, 6), "gap": round(ig.gap, 6),
                                                "completeness_error": round(ig.completeness_error, 6)},
                "unavailable": list(self.unavailable),
                "deletion": self.deletion.to_dict(),
                "source_share": {m: [round(v, 5) for v in vs] for m, vs in self.source_share.items()}}


def attribute(model, src: Tensor, tgt_in: Tensor, step: int, token: int, alternative: int | None = None,
              ig_steps: int = 64, rolled: Contributions | None = None) -> tuple[dict[str, Attribution],
                                                                               IntegratedGradients | None]:
    """The six methods of METHODS for the token predicted at `step`, in the page's order, and IG's details; on a
    model without gradients (int8) the four that need none, and None.
    rolled: the sentence's contributions() when the caller has them already (one hooked pass serves every step)."""
    rolled = rolled or contributions(model, src, tgt_in)
    methods = {m: rolled.attribution(m, step) for m in ("attention", "attention_norm", "alti_plus", "rollout")}
    ig = None
    if has_gradients(model):
        ig = integrated_gradients(model, src, tgt_in, step, token, alternative, ig_steps)
        methods |= {"gradient_x_input": gradient_x_input(model, src, tgt_in, step, token, alternative),
                    "integrated_gradients": ig.attribution}
    return {m: methods[m] for m in METHODS if m in methods}, ig


def explain(model, src: Tensor, tgt_in: Tensor, chosen: list[int], step: int, alternative: int | None = None,
            ig_steps: int = 64, labels: dict[str, list[str]] | None = None) -> Explanation:
    """src (1, S); tgt_in (1, T) = <s> and the translation; chosen (T,): the token that followed each position.
    Every method for chosen[step] (contrastive against `alternative` where a method can be), the deletion test,
    and the source share of every step by ALTI+ and by gradient x input. labels: the pieces, when the caller knows
    them ("source_tokens", "decoder_inputs", "output_tokens")."""
    _check_step(src, tgt_in, step)
    token = chosen[step]
    if alternative is not None and not 0 <= alternative < model.cfg.vocab_size:
        raise InputError(f"the alternative must be a token id below {model.cfg.vocab_size}")
    rolled = contributions(model, src, tgt_in)
    methods, ig = attribute(model, src, tgt_in, step, token, alternative, ig_steps, rolled)
    deletion = deletion_test(model, src, tgt_in, step, token, {m: a.source for m, a in methods.items()})
    shares = {"alti_plus": rolled.source_share("alti_plus").tolist()}
    if ig is not None:
        shares["gradient_x_input"] = gradient_source_shares(model, src, tgt_in, chosen).tolist()
    unavailable = () if ig is not None else NEED_GRADIENTS
    return Explanation(step, token, alternative, methods, ig, deletion, shares, unavailable=unavailable,
                       labels=labels or {})
