"""Forward hooks addressed by module name: `record(model, names)` keeps what modules give out, `hooks(model,
{name: fn})` runs (or replaces) them; the attention maps, the insides of attention, head ablation and hiding source
tokens are built on these two, and so are the logit lens, the attributions and activation patching.

Every hook is registered inside a context manager and removed in its `finally`. The app serves many
users from one model object, so a hook acts only for the caller that registered it: each context
marks itself active in a ContextVar, which is private to the thread (or task) that entered it.

Shape legend: B batch, L layers, H heads, S source length, T target length.
"""
from __future__ import annotations

import contextvars
import itertools
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..errors import InputError
from ..model import ATTENTION_KINDS, KINDS, Transformer
from ..model import Tap

_active: contextvars.ContextVar[frozenset[int]] = contextvars.ContextVar("active_hook_sessions", default=frozenset())
_session_ids = itertools.count()


def attention_names(model: Transformer) -> dict[str, list[str]]:
    """The names (model.named_modules()) of every MultiHeadAttention, per kind, in layer order:
    {"encoder": ["encoder.layers.0.self_attn", ...], "decoder": [...], "cross": ["decoder.layers.0.cross_attn", ...]}.
    Their probabilities are the tap NAME + ".attn_probs", their projections NAME + ".w_q" and so on."""
    return {kind.key: [f"{kind.stack}.layers.{i}.{kind.block}" for i in range(len(getattr(model, kind.stack).layers))]
            for kind in ATTENTION_KINDS}


def tap_names(model: Transformer) -> dict[str, list[str]]:
    """The attention-probability taps, per kind, in layer order."""
    return {kind: [f"{name}.attn_probs" for name in names] for kind, names in attention_names(model).items()}


@contextmanager
def hooks(model: nn.Module, fns: dict[str, Callable], records: bool = False) -> Iterator[None]:
    """Forward hooks by module name: fns[name](module, inputs, output) runs after the module `name` of
    model.named_modules(), and what it returns (when not None) replaces the output. Every hook acts only for the
    caller that entered this block (another user's request on the same model is untouched), and all are removed on
    exit, error or not. records: the hooks keep what they see across calls (decoding refuses to reorder beams then).
    """
    modules = dict(model.named_modules())
    unknown = [name for name in fns if name not in modules]
    if unknown:
        raise KeyError(f"the model has no module {unknown[0]!r}")
    sid = next(_session_ids)
    token = _active.set(_active.get() | {sid})
    handles = []

    def live() -> bool:
        return sid in _active.get()

    try:
        for name, fn in fns.items():
            module = modules[name]
            if isinstance(module, Tap):  # the tap learns that someone watches it (and then forms the probabilities)
                handles.append(module.register_forward_hook(fn, live=live, records=records))
            else:
                handles.append(module.register_forward_hook(lambda m, i, o, fn=fn: fn(m, i, o) if live() else None))
        yield
    finally:
        for h in handles:
            h.remove()
        _active.reset(token)


def _kept(x, keep_graph: bool):
    """A recorded value: detached as fp32 on the CPU (integer and bool tensors keep their type); keep_graph: the live
    tensor, its gradient kept for a backward pass. Tuples element by element; anything else as it is."""
    if isinstance(x, tuple):
        return tuple(_kept(t, keep_graph) for t in x)
    if not isinstance(x, Tensor):
        return x
    if keep_graph:
        if x.requires_grad:
            x.retain_grad()
        return x
    return x.detach().float().cpu() if x.is_floating_point() else x.detach().cpu()


@contextmanager
def record(model: nn.Module, names: Iterable[str], inputs: bool = False,
           keep_graph: bool = False) -> Iterator[dict[str, list]]:
    """Record what the named modules give out, per forward call, inside the block; hooks removed on exit.
    Yields {name: [output of call 0, call 1, ...]}, or with inputs=True {name: [(inputs, output), ...]} where
    inputs is the tuple of positional arguments. Values are detached fp32 on the CPU, unless keep_graph.

    >>> with record(model, ["decoder.layers.2"]) as seen:
    ...     model(src, tgt)
    >>> seen["decoder.layers.2"][0]  # (B, T, D): decoder layer 2's output in the first (here the only) call
    """
    seen: dict[str, list] = {name: [] for name in names}

    def keep(store: list) -> Callable:
        def hook(module, args, output):
            out = _kept(output, keep_graph)
            store.append((_kept(args, keep_graph), out) if inputs else out)
        return hook

    with hooks(model, {name: keep(store) for name, store in seen.items()}, records=True):
        yield seen


# -----------------------------------------------------------------------------
# Recording


@dataclass
class AttentionMaps:
    """One sentence's attention probabilities, (L, H, query, key) per kind, with the token labels."""

    encoder: Tensor  # (L, H, S, S)
    decoder: Tensor  # (L, H, T, T), lower-triangular
    cross: Tensor  # (L, H, T, S)
    source_tokens: list[str] | None = None
    target_tokens: list[str] | None = None  # the decoder's inputs: <s> then the translation

    def to_dict(self) -> dict:
        return {
            "encoder": self.encoder.tolist(),
            "decoder": self.decoder.tolist(),
            "cross": self.cross.tolist(),
            "source_tokens": self.source_tokens,
            "target_tokens": self.target_tokens,
        }


class AttentionRecorder:
    """What `capture_attention` yields: the maps of every forward pass run inside the context."""

    def __init__(self, seen: dict[str, list[Tensor]], names: dict[str, list[str]]):
        self.calls: dict[str, list[list[Tensor]]] = {kind: [seen[n] for n in layers] for kind, layers in names.items()}

    def _assemble(self, kind: str) -> Tensor:
        """(B, L, H, Tq, Tk); incremental decoding's one-row calls are stacked along the query axis."""
        per_layer = []
        for chunks in self.calls[kind]:
            if not chunks:
                raise RuntimeError(f"no {kind} attention was recorded: run the model inside the context")
            Tk = max(c.size(-1) for c in chunks)
            padded = [F.pad(c, (0, Tk - c.size(-1))) for c in chunks]  # keys not yet seen get probability 0
            per_layer.append(torch.cat(padded, dim=2))  # (B, H, Tq, Tk)
        return torch.stack(per_layer, dim=1)  # (B, L, H, Tq, Tk)

    @property
    def batch_size(self) -> int:
        return self.calls["encoder"][0][0].size(0)

    def sentence(self, b: int = 0) -> AttentionMaps:
        """The maps of batch row b, (L, H, query, key) per kind (padding positions included)."""
        return AttentionMaps(*(self._assemble(kind)[b] for kind in KINDS))

    def sentences(self, lengths: list[tuple[int, int]]) -> list[AttentionMaps]:
        """The maps of every batch row, cut to its (source, target) lengths: the padding left out, each row's maps
        its own tensors (not views of the batch's)."""
        full = {kind: self._assemble(kind) for kind in KINDS}  # (B, L, H, Tq, Tk)
        return [AttentionMaps(full["encoder"][b, ..., :S, :S].clone(), full["decoder"][b, ..., :T, :T].clone(),
                              full["cross"][b, ..., :T, :S].clone()) for b, (S, T) in enumerate(lengths)]


@contextmanager
def capture_attention(model: Transformer) -> Iterator[AttentionRecorder]:
    """Record every attention map the model computes inside the block (`record` on every tap); hooks removed on exit.

    >>> with capture_attention(model) as rec:
    ...     model(src, tgt)
    >>> maps = rec.sentence(0)  # maps.encoder (L, H, S, S), maps.decoder (L, H, T, T), maps.cross (L, H, T, S)
    """
    names = tap_names(model)
    with record(model, [n for layers in names.values() for n in layers]) as seen:
        yield AttentionRecorder(seen, names)


# -----------------------------------------------------------------------------
# Ablation


def parse_head(spec: str) -> tuple[str, int, int]:
    """'cross:2:1' -> ('cross', 2, 1), the kind, layer and head (0-based)."""
    try:
        kind, layer, head = spec.split(":")
        return kind, int(layer), int(head)
    except ValueError:
        raise InputError(f"a head is written kind:layer:head, e.g. 'cross:0:3'; got {spec!r}") from None


@contextmanager
def ablate_heads(model: Transformer, heads: Iterable[tuple[str, int, int]]) -> Iterator[None]:
    """Switch attention heads off inside the block: their probabilities become 0, so they add nothing.

    `heads` holds (kind, layer, head) with kind in 'encoder', 'decoder', 'cross'. The weights are not
    touched; leaving the block removes the hooks and the model is exactly as before.
    """
    taps = tap_names(model)
    chosen: dict[tuple[str, int], list[int]] = {}
    for kind, layer, head in heads:
        if kind not in taps or not 0 <= layer < len(taps[kind]) or not 0 <= head < model.cfg.n_heads:
            raise InputError(
                f"no head {kind}:{layer}:{head}; kinds are {KINDS}, layers 0..{len(taps.get(kind, [])) - 1}, "
                f"heads 0..{model.cfg.n_heads - 1}"
            )
        chosen.setdefault((kind, layer), []).append(head)

    def silence(head_ids: list[int]) -> Callable:
        keep = torch.ones(model.cfg.n_heads)
        keep[head_ids] = 0.0
        return lambda module, inputs, output: output * keep.to(output)[None, :, None, None]  # (B, H, Tq, Tk)

    with hooks(model, {taps[kind][layer]: silence(ids) for (kind, layer), ids in chosen.items()}):
        yield


# -----------------------------------------------------------------------------
# Inside the attention blocks: Q, K, V, the mask, the probabilities and W^O's input and output


@dataclass
class AttentionInternals:
    """One attention block in one forward pass, for one sentence, as its hooks saw it."""

    q: Tensor  # (H, Tq, Dh): the output of W^Q (hook on w_q), split into heads
    k: Tensor  # (H, Tk, Dh): the output of W^K (hook on w_k), split into heads
    v: Tensor  # (H, Tk, Dh): the output of W^V (hook on w_v), split into heads
    allowed: Tensor  # (Tq, Tk) bool: the mask the block received, True where attention may go (all True: no mask)
    probs: Tensor  # (H, Tq, Tk): the attn_probs tap
    concat: Tensor  # (Tq, H * Dh): Concat(head_1..head_h), the input of W^O
    output: Tensor  # (Tq, D): the output of W^O


class InternalsRecorder:
    """What `capture_internals` yields: per kind and layer, the tensors of one forward pass (whole batch)."""

    PARTS = {"mask": "", "q": ".w_q", "k": ".w_k", "v": ".w_v", "probs": ".attn_probs", "w_o": ".w_o"}

    def __init__(self, seen: dict[str, list], names: dict[str, list[str]]):
        self.seen, self.names = seen, names

    def _one(self, kind: str, layer: int, part: str) -> tuple[tuple, Tensor]:
        """(inputs, output) of the one call of a part of attention block (kind, layer)."""
        calls = self.seen[self.names[kind][layer] + self.PARTS[part]]
        if len(calls) != 1:
            raise RuntimeError(f"{kind} layer {layer} ran {len(calls)} times inside capture_internals; "
                               "record exactly one teacher-forced forward pass")
        return calls[0]

    def sentence(self, b: int = 0) -> dict[str, list[AttentionInternals]]:
        """Batch row b, per kind, in layer order (padding positions included)."""
        out: dict[str, list[AttentionInternals]] = {}
        for kind, layers in self.names.items():
            for layer in range(len(layers)):
                q, k, v = (self._one(kind, layer, part)[1] for part in ("q", "k", "v"))  # (B, N, D) each
                mask = self._one(kind, layer, "mask")[0][2]  # forward(query, source, mask, ...)
                probs = self._one(kind, layer, "probs")[1]  # (B, H, Tq, Tk)
                (concat, *_), output = self._one(kind, layer, "w_o")  # W^O's input and output, (B, Tq, D) each
                B, H, Tq, Tk = probs.shape
                allowed = torch.ones(B, 1, Tq, Tk, dtype=torch.bool)
                if mask is not None:
                    allowed = allowed & mask  # (B, 1, Tq, Tk): the mask broadcasts as attention broadcast it
                heads = lambda x: x[b].view(x.size(1), H, -1).transpose(0, 1)  # (N, D) -> (H, N, Dh)
                out.setdefault(kind, []).append(AttentionInternals(
                    heads(q), heads(k), heads(v), allowed[b, 0], probs[b], concat[b], output[b]))
        return out


@contextmanager
def capture_internals(model: Transformer) -> Iterator[InternalsRecorder]:
    """Record, for every attention block, what eq. 1 and Concat(...) W^O were computed from, in one forward pass:
    `record` (with inputs) on each MultiHeadAttention (its mask), on its W^Q, W^K, W^V and W^O, and on its tap.

    >>> with capture_internals(model) as rec:
    ...     model(src, tgt)
    >>> inside = rec.sentence(0)["cross"][2]  # cross-attention of decoder layer 2
    """
    names = attention_names(model)
    parts = [name + part for layers in names.values() for name in layers for part in InternalsRecorder.PARTS.values()]
    with record(model, parts, inputs=True) as seen:
        yield InternalsRecorder(seen, names)


# -----------------------------------------------------------------------------
# Hiding source tokens from the decoder


@contextmanager
def hide_source(model: Transformer, keep: Tensor) -> Iterator[None]:
    """Inside the block, every cross-attention sees only the source tokens where keep (B, S) is True: the
    probabilities of hidden keys become 0 and each row is renormalised, which is what a -inf in the
    cross-attention mask gives. Hooks on the cross-attention taps; removed on exit, weights untouched."""
    if not bool(keep.any(dim=-1).all()):
        raise InputError("at least one source token must stay visible in every row")

    def hide(module, inputs, output):  # output (B, H, T, S)
        kept = output * keep.to(output)[:, None, None, :]
        return kept / kept.sum(dim=-1, keepdim=True).clamp_min(1e-30)

    with hooks(model, {tap: hide for tap in tap_names(model)["cross"]}):
        yield
