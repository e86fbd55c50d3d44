"""Forward hooks on the attention taps: record the maps, or switch heads off.

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
from ..model import KINDS, Tap, Transformer

_active: contextvars.ContextVar[frozenset[int]] = contextvars.ContextVar("active_hook_sessions", default=frozenset())
_session_ids = itertools.count()


def attention_taps(model: Transformer) -> dict[str, list[Tap]]:
    """The tap modules of every attention block, per kind, in layer order."""
    return model.taps()


@contextmanager
def _owned_hooks(hooks: list[tuple[nn.Module, Callable]], records: bool = False) -> Iterator[None]:
    """Register forward hooks that act only in the current context; remove them all on exit, error or not.

    On a Tap the hook is registered as a watcher that is live for this caller only (records: it keeps what it
    sees); on any other module it is a plain forward hook that does nothing for other callers.
    """
    sid = next(_session_ids)
    token = _active.set(_active.get() | {sid})
    handles = []

    def live() -> bool:
        return sid in _active.get()

    try:
        for module, fn in hooks:
            if isinstance(module, Tap):
                handles.append(module.register_forward_hook(fn, live=live, records=records))
            else:
                handles.append(module.register_forward_hook(lambda m, i, o, fn=fn: fn(m, i, o) if live() else None))
        yield
    finally:
        for h in handles:
            h.remove()
        _active.reset(token)


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

    def __init__(self, n_layers: dict[str, int]):
        self.calls: dict[str, list[list[Tensor]]] = {k: [[] for _ in range(n)] for k, n in n_layers.items()}

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


@contextmanager
def capture_attention(model: Transformer) -> Iterator[AttentionRecorder]:
    """Record every attention map the model computes inside the block; hooks are removed on exit.

    >>> with capture_attention(model) as rec:
    ...     model(src, tgt)
    >>> maps = rec.sentence(0)  # maps.encoder (L, H, S, S), maps.decoder (L, H, T, T), maps.cross (L, H, T, S)
    """
    taps = attention_taps(model)
    recorder = AttentionRecorder({k: len(v) for k, v in taps.items()})

    def record(kind: str, i: int) -> Callable:
        def hook(module, inputs, output):
            recorder.calls[kind][i].append(output.detach().float().cpu())  # (B, H, Tq, Tk)

        return hook

    hooks = [(tap, record(kind, i)) for kind, modules in taps.items() for i, tap in enumerate(modules)]
    with _owned_hooks(hooks, records=True):
        yield recorder


@contextmanager
def capture_inputs(model: Transformer) -> Iterator[list[tuple[Tensor, Tensor]]]:
    """Record what enters the first layer, per forward call of the positional encoding (encoder first).

    Yields a list that fills with (sqrt(d_model) * embedding, embedding + PE) pairs, each (B, N, D).
    """
    records: list[tuple[Tensor, Tensor]] = []

    def hook(module, inputs, output):
        records.append((inputs[0].detach().float().cpu(), output.detach().float().cpu()))

    with _owned_hooks([(model.positional, hook)]):
        yield records


@contextmanager
def capture_outputs(modules: list[nn.Module], keep_graph: bool = False) -> Iterator[list[list[Tensor]]]:
    """Record what each module gives out, per forward call, detached as fp32 on the CPU; hooks removed on exit.
    keep_graph: record the live tensors instead, their gradients kept for a backward pass (attributions).

    >>> with capture_outputs(model.decoder.layers) as outs:
    ...     model(src, tgt)
    >>> outs[2][0]  # (B, T, D): decoder layer 2's output in the first (here the only) call
    """
    records: list[list[Tensor]] = [[] for _ in modules]

    def keep(i: int) -> Callable:
        def hook(module, inputs, output):
            if keep_graph and output.requires_grad:
                output.retain_grad()
            records[i].append(output if keep_graph else output.detach().float().cpu())
        return hook

    with _owned_hooks([(m, keep(i)) for i, m in enumerate(modules)]):
        yield records


@contextmanager
def capture_calls(modules: list[nn.Module]) -> Iterator[list[list[tuple[Tensor, Tensor]]]]:
    """Record what enters and leaves each module, per forward call: (first input, output), each detached as fp32
    on the CPU; hooks removed on exit. ALTI+ checks its rebuilt block outputs against these."""
    records: list[list[tuple[Tensor, Tensor]]] = [[] for _ in modules]

    def keep(i: int) -> Callable:
        def hook(module, inputs, output):
            records[i].append((inputs[0].detach().float().cpu(), output.detach().float().cpu()))
        return hook

    with _owned_hooks([(m, keep(i)) for i, m in enumerate(modules)]):
        yield records


@contextmanager
def replace_outputs(module: nn.Module, outputs: list[Tensor]) -> Iterator[None]:
    """The module's i-th forward call inside the block gives outputs[i] instead of what it computed (attributions
    run the model on chosen embeddings this way: the encoder embeds the source first, then the decoder its inputs).
    The hook is removed on exit."""
    calls = itertools.count()

    def replace(module, inputs, output):
        i = next(calls)
        return outputs[i] if i < len(outputs) else output

    with _owned_hooks([(module, replace)]):
        yield


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
    taps = attention_taps(model)
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

    with _owned_hooks([(taps[kind][layer], silence(ids)) for (kind, layer), ids in chosen.items()]):
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

    FIELDS = ("mask", "q", "k", "v", "probs", "w_o")

    def __init__(self, n_layers: dict[str, int]):
        self.seen: dict[tuple[str, int], dict[str, list]] = {
            (kind, i): {f: [] for f in self.FIELDS} for kind, n in n_layers.items() for i in range(n)}

    def _one(self, kind: str, layer: int, field: str):
        calls = self.seen[(kind, layer)][field]
        if len(calls) != 1:
            raise RuntimeError(f"{kind} layer {layer} ran {len(calls)} times inside capture_internals; "
                               "record exactly one teacher-forced forward pass")
        return calls[0]

    def sentence(self, b: int = 0) -> dict[str, list[AttentionInternals]]:
        """Batch row b, per kind, in layer order (padding positions included)."""
        out: dict[str, list[AttentionInternals]] = {}
        for kind, layer in self.seen:
            q, k, v, mask = (self._one(kind, layer, f) for f in ("q", "k", "v", "mask"))
            probs = self._one(kind, layer, "probs")
            concat, output = self._one(kind, layer, "w_o")
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
    """Record, for every attention block, what eq. 1 and Concat(...) W^O were computed from, in one forward pass.

    Hooks: on each MultiHeadAttention module (its mask), on its W^Q, W^K, W^V and W^O linears, and on its
    attn_probs tap. All are removed on exit.

    >>> with capture_internals(model) as rec:
    ...     model(src, tgt)
    >>> inside = rec.sentence(0)["cross"][2]  # cross-attention of decoder layer 2
    """
    blocks = model.attention_blocks()
    recorder = InternalsRecorder({k: len(v) for k, v in blocks.items()})

    def keep(store: list, pick: Callable) -> Callable:
        def hook(module, inputs, output):
            store.append(pick(inputs, output))
        return hook

    def cpu(t: Tensor | None) -> Tensor | None:
        return None if t is None else t.detach().float().cpu() if t.is_floating_point() else t.detach().cpu()

    hooks = []
    for kind, modules in blocks.items():
        for i, attn in enumerate(modules):
            seen = recorder.seen[(kind, i)]
            hooks.append((attn, keep(seen["mask"], lambda a, o: cpu(a[2]))))  # forward(query, source, mask, ...)
            hooks.append((attn.w_k, keep(seen["k"], lambda a, o: cpu(o))))  # (B, Tk, D)
            hooks.append((attn.w_v, keep(seen["v"], lambda a, o: cpu(o))))  # (B, Tk, D)
            hooks.append((attn.w_q, keep(seen["q"], lambda a, o: cpu(o))))  # (B, Tq, D)
            hooks.append((attn.attn_probs, keep(seen["probs"], lambda a, o: cpu(o))))  # (B, H, Tq, Tk)
            hooks.append((attn.w_o, keep(seen["w_o"], lambda a, o: (cpu(a[0]), cpu(o)))))  # (B, Tq, D) each
    with _owned_hooks(hooks, records=True):
        yield recorder


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

    with _owned_hooks([(tap, hide) for tap in attention_taps(model)["cross"]]):
        yield
