"""The encoder-decoder Transformer of "Attention Is All You Need" (Vaswani et al. 2017), written out.

Shape legend: B batch, S source length, T target length, H heads, D d_model, Dh head size (D / H),
V vocabulary, L layers. Masks are boolean and True where attention is allowed; None means no mask.
The model's taps (`Tap`, at the end) are where forward hooks read it.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .config import ModelConfig

if TYPE_CHECKING:
    from .decoding import KVCache  # built and owned by the decoding loop, passed in, never stored on the model

# -----------------------------------------------------------------------------
# Attention


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1..head_h) W^O, head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V) (§3.2.2).

    Self-attention reads its keys and values from its own input; cross-attention (`cross=True`) from the
    encoder output. With a KVCache, self-attention appends the new positions' keys and values, and
    cross-attention projects the encoder output once, on the first step; `layer` is its decoder layer's entry there.
    """

    def __init__(self, cfg: ModelConfig, cross: bool = False, layer: int = 0):
        super().__init__()
        self.n_heads, self.d_head, self.cross, self.layer = cfg.n_heads, cfg.d_head, cross, layer
        self.w_q = nn.Linear(cfg.d_model, cfg.d_model)
        self.w_k = nn.Linear(cfg.d_model, cfg.d_model)
        self.w_v = nn.Linear(cfg.d_model, cfg.d_model)
        self.w_o = nn.Linear(cfg.d_model, cfg.d_model)
        self.attn_probs = Tap()  # hooks here see softmax(QK^T/sqrt(d_k)), (B, H, Tq, Tk)
        self.attn_dropout = cfg.attn_dropout  # P_drop on the probabilities (functional dropout: no module call per step)

    def split_heads(self, x: Tensor) -> Tensor:
        B, N, _ = x.shape
        return x.view(B, N, self.n_heads, self.d_head).transpose(1, 2)  # (B, N, D) -> (B, H, N, Dh)

    def keys_values(self, source: Tensor, cache: KVCache | None) -> tuple[Tensor, Tensor]:
        """K = source W^K and V = source W^V, split into heads, (B, H, Tk, Dh) each; with a cache, this layer's."""
        i = self.layer
        if cache is not None and self.cross and cache.cross_k[i] is not None:
            return cache.cross_k[i], cache.cross_v[i]  # the encoder output does not change while decoding
        k, v = self.split_heads(self.w_k(source)), self.split_heads(self.w_v(source))  # (B, H, N, Dh) each
        if cache is None:
            return k, v
        if self.cross:
            cache.cross_k[i], cache.cross_v[i] = k, v
            return k, v
        return cache.append(i, k, v)  # (B, H, t, Dh): every position so far

    def forward(self, query: Tensor, source: Tensor, mask: Tensor | None, cache: KVCache | None = None) -> Tensor:
        """query (B, Tq, D) asks; source (B, Tk, D) is what keys and values are projected from (the query
        itself for self-attention, the encoder output for cross-attention); mask broadcasts to (B, H, Tq, Tk).
        cache: a KVCache, when decoding step by step."""
        q = self.split_heads(self.w_q(query))  # (B, H, Tq, Dh)
        k, v = self.keys_values(source, cache)  # (B, H, Tk, Dh) each
        if self.attn_probs.watched:
            scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)  # (B, H, Tq, Tk), eq. 1
            if mask is not None:
                scores = scores.masked_fill(~mask, float("-inf"))
            probs = self.attn_probs(scores.softmax(dim=-1))  # the tap, after softmax and before dropout
            heads = dropout(probs, self.attn_dropout, self.training) @ v  # (B, H, Tq, Dh)
        else:
            # Nobody is watching: PyTorch's fused kernel computes the same eq. 1 (tests/test_model.py checks it).
            p = self.attn_dropout if self.training else 0.0
            heads = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)  # (B, H, Tq, Dh)
        B, _, Tq, _ = heads.shape
        concat = heads.transpose(1, 2).reshape(B, Tq, self.n_heads * self.d_head)  # (B, H, Tq, Dh) -> (B, Tq, D)
        return self.w_o(concat)


class FeedForward(nn.Module):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2 (§3.3); an imported model may use another activation than max(0, .)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.w_1 = nn.Linear(cfg.d_model, cfg.d_ff)
        self.w_2 = nn.Linear(cfg.d_ff, cfg.d_model)
        self.activation = {"relu": F.relu, "silu": F.silu, "gelu": F.gelu}[cfg.activation]
        self.act_dropout = cfg.act_dropout

    def forward(self, x: Tensor) -> Tensor:
        return self.w_2(dropout(self.activation(self.w_1(x)), self.act_dropout, self.training))


# -----------------------------------------------------------------------------
# Layers: each sublayer is wrapped as LayerNorm(x + Dropout(Sublayer(x))) (§3.1, §5.4), or pre-norm


def dropout(x: Tensor, p: float, training: bool) -> Tensor:
    """F.dropout, skipped outright at inference, where every sublayer of every decoding step would call it for nothing."""
    return F.dropout(x, p, True) if training and p > 0 else x


class Layer(nn.Module):
    """What both layer kinds share: dropout on each sublayer's output before the residual sum (§5.4)."""

    dropout: float  # P_drop

    def drop(self, y: Tensor) -> Tensor:
        return dropout(y, self.dropout, self.training)


class EncoderLayer(Layer):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.self_attn = MultiHeadAttention(cfg)
        self.feed_forward = FeedForward(cfg)
        self.norm_1 = nn.LayerNorm(cfg.d_model)
        self.norm_2 = nn.LayerNorm(cfg.d_model)
        self.dropout = cfg.dropout
        self.norm_first = cfg.norm_first

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        """x (B, S, D) -> (B, S, D): multi-head self-attention, then the feed-forward network."""
        if self.norm_first:
            y = self.norm_1(x)
            x = x + self.drop(self.self_attn(y, y, src_mask))
            x = x + self.drop(self.feed_forward(self.norm_2(x)))
        else:
            x = self.norm_1(x + self.drop(self.self_attn(x, x, src_mask)))
            x = self.norm_2(x + self.drop(self.feed_forward(x)))
        return x


class DecoderLayer(Layer):
    def __init__(self, cfg: ModelConfig, layer: int):
        super().__init__()
        self.self_attn = MultiHeadAttention(cfg, layer=layer)
        self.cross_attn = MultiHeadAttention(cfg, cross=True, layer=layer)
        self.feed_forward = FeedForward(cfg)
        self.norm_1 = nn.LayerNorm(cfg.d_model)
        self.norm_2 = nn.LayerNorm(cfg.d_model)
        self.norm_3 = nn.LayerNorm(cfg.d_model)
        self.dropout = cfg.dropout
        self.norm_first = cfg.norm_first

    def forward(self, x, memory, src_mask, tgt_mask, cache: KVCache | None = None) -> Tensor:
        """x (B, T, D): the target side so far (with a cache: only the new positions); memory (B, S, D)."""
        if self.norm_first:
            y = self.norm_1(x)
            x = x + self.drop(self.self_attn(y, y, tgt_mask, cache))  # masked multi-head attention
            x = x + self.drop(self.cross_attn(self.norm_2(x), memory, src_mask, cache))  # over the encoder output
            x = x + self.drop(self.feed_forward(self.norm_3(x)))
        else:
            x = self.norm_1(x + self.drop(self.self_attn(x, x, tgt_mask, cache)))  # masked multi-head attention
            x = self.norm_2(x + self.drop(self.cross_attn(x, memory, src_mask, cache)))  # over the encoder output
            x = self.norm_3(x + self.drop(self.feed_forward(x)))
        return x


# -----------------------------------------------------------------------------
# Embeddings


class PositionalEncoding(nn.Module):
    """PE(pos, 2i) = sin(pos / 10000^(2i/D)), PE(pos, 2i+1) = cos(pos / 10000^(2i/D)) (§3.5), not learned.
    Layout "halves" (Marian): the same sines in dims 0 .. D/2 - 1, the cosines in D/2 .. D - 1."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        position = torch.arange(cfg.max_len, dtype=torch.float64).unsqueeze(1)  # (max_len, 1)
        div_term = torch.pow(10000.0, torch.arange(0, cfg.d_model, 2, dtype=torch.float64) / cfg.d_model)  # (D/2,)
        pe = torch.zeros(cfg.max_len, cfg.d_model, dtype=torch.float64)
        sines, cosines = (slice(0, None, 2), slice(1, None, 2)) if cfg.positional_layout == "interleaved" else (
            slice(0, cfg.d_model // 2), slice(cfg.d_model // 2, None))
        pe[:, sines] = torch.sin(position / div_term)
        pe[:, cosines] = torch.cos(position / div_term)
        self.register_buffer("pe", pe.float(), persistent=False)  # rebuilt from the config, never saved
        self.dropout = cfg.dropout

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        """x (B, N, D) holds positions offset .. offset+N-1."""
        return dropout(x + self.pe[offset : offset + x.size(1)], self.dropout, self.training)


class Embeddings(nn.Module):
    """Token embedding times sqrt(D) (§3.4); the same matrix serves encoder, decoder and output projection.
    An imported model may keep a source table of its own (src_vocab_size): then `table` is the target side's."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.table = nn.Embedding(cfg.vocab_size, cfg.d_model, padding_idx=cfg.pad_id)
        self.source_table = nn.Embedding(cfg.src_vocab_size, cfg.d_model) if cfg.src_vocab_size else None
        for table in filter(None, (self.table, self.source_table)):
            nn.init.normal_(table.weight, mean=0.0, std=cfg.d_model**-0.5)  # so that sqrt(D) * E has unit scale
        with torch.no_grad():
            self.table.weight[cfg.pad_id].zero_()
        self.scale = math.sqrt(cfg.d_model) if cfg.scale_embedding else 1.0

    def forward(self, tokens: Tensor, source: bool = False) -> Tensor:
        table = self.source_table if source and self.source_table is not None else self.table
        return table(tokens) * self.scale  # (B, N, D)


# -----------------------------------------------------------------------------
# Stacks and the whole model


class Encoder(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.layers = nn.ModuleList([EncoderLayer(cfg) for _ in range(cfg.n_encoder_layers)])
        self.final_norm = nn.LayerNorm(cfg.d_model) if cfg.norm_first else nn.Identity()

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        for layer in self.layers:
            x = layer(x, src_mask)
        return self.final_norm(x)


class Decoder(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.layers = nn.ModuleList([DecoderLayer(cfg, i) for i in range(cfg.n_decoder_layers)])
        self.final_norm = nn.LayerNorm(cfg.d_model) if cfg.norm_first else nn.Identity()

    def forward(self, x, memory, src_mask, tgt_mask, cache: KVCache | None = None) -> Tensor:
        for layer in self.layers:
            x = layer(x, memory, src_mask, tgt_mask, cache)
        return self.final_norm(x)


@dataclass(frozen=True)
class AttentionKind:
    """One of the model's three kinds of attention: the one place that names it and says which modules compute it."""

    key: str  # what code, links and downloads call it (the page's words for it: playground/pieces.py)
    stack: str  # the Transformer's attribute holding the layers: "encoder" or "decoder"
    block: str  # the layer's attribute computing it: "self_attn" or "cross_attn"


ATTENTION_KINDS = (
    AttentionKind("encoder", "encoder", "self_attn"),
    AttentionKind("decoder", "decoder", "self_attn"),
    AttentionKind("cross", "decoder", "cross_attn"),
)
KINDS = tuple(kind.key for kind in ATTENTION_KINDS)  # ("encoder", "decoder", "cross")


class Transformer(nn.Module):
    """Figure 1: an encoder stack, a decoder stack, and one shared embedding matrix."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = Embeddings(cfg)
        self.positional = PositionalEncoding(cfg)
        self.encoder = Encoder(cfg)
        self.decoder = Decoder(cfg)
        self.output = nn.Linear(cfg.d_model, cfg.vocab_size, bias=cfg.output_bias)  # pre-softmax linear transformation
        self.output.weight = self.embed.table.weight  # one matrix shared three ways (§3.4)
        for name, p in self.named_parameters():  # a shared parameter is listed once, as embed.table.weight
            if p.dim() > 1 and not name.startswith("embed."):
                nn.init.xavier_uniform_(p)

    @torch.no_grad()
    def init_weights(self, generator: torch.Generator) -> None:
        """Draw every weight again from `generator` alone (a seeded model that leaves the global RNG alone):
        matrices Xavier-uniform, the embedding N(0, 1/D) with a zero padding row, biases 0, norms 1 and 0."""
        for module in self.modules():
            if isinstance(module, nn.LayerNorm):
                module.reset_parameters()  # weight 1, bias 0
            elif isinstance(module, nn.Linear) and module is not self.output:  # the output is the embedding
                nn.init.xavier_uniform_(module.weight, generator=generator)
                if module.bias is not None:
                    module.bias.zero_()
        for table in filter(None, (self.embed.table, self.embed.source_table)):
            table.weight.normal_(0.0, self.cfg.d_model**-0.5, generator=generator)
        self.embed.table.weight[self.cfg.pad_id].zero_()
        if self.output.bias is not None:
            self.output.bias.zero_()

    def load_weights(self, state: dict[str, Tensor]) -> None:
        """load_state_dict that accepts files without the tied output.weight (it is the embedding)."""
        missing, unexpected = self.load_state_dict(state, strict=False)
        if unexpected or set(missing) - {"output.weight"}:
            raise KeyError(f"weights do not fit this model: missing {missing}, unexpected {unexpected}")

    # -- masks --------------------------------------------------------------

    def src_mask(self, src: Tensor) -> Tensor | None:
        """(B, 1, 1, S), True at real tokens; None when there is no padding (attention then needs no mask)."""
        real = src.ne(self.cfg.pad_id)
        return None if bool(real.all()) else real[:, None, None, :]

    @staticmethod
    def causal_mask(T: int, device: torch.device) -> Tensor:
        return torch.ones(T, T, dtype=torch.bool, device=device).tril()  # (T, T): position t sees 0..t

    # -- the three entry points -------------------------------------------------

    def encode(self, src: Tensor) -> Tensor:
        """src (B, S) token ids -> memory (B, S, D)."""
        return self.encoder(self.positional(self.embed(src, source=True)), self.src_mask(src))

    def generator(self, x: Tensor) -> Tensor:
        """Pre-softmax linear transformation with the shared embedding matrix, then log-softmax (§3.4)."""
        return F.log_softmax(self.output(x), dim=-1)  # (B, T, V)

    def decode_states(self, tgt: Tensor, memory: Tensor, src: Tensor) -> Tensor:
        """Teacher-forced decoder stack: tgt (B, T) -> its output (B, T, D) at each position, before the projection."""
        T = tgt.size(1)
        real = tgt.ne(self.cfg.pad_id)
        real[:, 0] = True  # the start token, even where it is <pad> (Marian starts from <pad>)
        tgt_mask = self.causal_mask(T, tgt.device) & real[:, None, None, :]  # (B, 1, T, T)
        # (padded target keys are masked too, so a query never attends to padding)
        return self.decoder(self.positional(self.embed(tgt)), memory, self.src_mask(src), tgt_mask)

    def decode(self, tgt: Tensor, memory: Tensor, src: Tensor) -> Tensor:
        """Teacher-forced decoder: tgt (B, T) -> log-probabilities (B, T, V) of the next token at each position."""
        return self.generator(self.decode_states(tgt, memory, src))

    def log_probs_at(self, src: Tensor, tgt: Tensor, at: Tensor) -> Tensor:
        """Teacher-forced, projecting only position at[b] of row b: (B, V). Attributions ask one step per row;
        forward would project every position, (B, T, V)."""
        x = self.decode_states(tgt, self.encode(src), src)  # (B, T, D)
        return self.generator(x[torch.arange(x.size(0), device=x.device), at])  # (B, D) -> (B, V)

    def forward(self, src: Tensor, tgt: Tensor) -> Tensor:
        return self.decode(tgt, self.encode(src), src)

    def decode_step(self, tokens: Tensor, memory: Tensor, cache: KVCache) -> Tensor:
        """Incremental decoding: tokens (B, T_new) follow the cache.length cached positions.

        Returns log-probabilities (B, V) of the token after the last one. The new positions attend to
        each other causally and to every cached position.
        """
        t0, T_new = cache.length, tokens.size(1)
        x = self.positional(self.embed(tokens), offset=t0)  # (B, T_new, D)
        tgt_mask = None  # one new position may see every cached one
        if T_new > 1:  # several new positions at once: they must not see each other's future
            tgt_mask = self.causal_mask(t0 + T_new, tokens.device)[t0:]  # (T_new, t)
        x = self.decoder(x, memory, cache.memory_mask, tgt_mask, cache)
        return self.generator(x[:, -1])  # (B, V)

    def attention_blocks(self) -> dict[str, list[MultiHeadAttention]]:
        """Every MultiHeadAttention module, per kind (ATTENTION_KINDS), in layer order."""
        return {kind.key: [getattr(layer, kind.block) for layer in getattr(self, kind.stack).layers]
                for kind in ATTENTION_KINDS}


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


# -----------------------------------------------------------------------------
# Tap: an identity module that marks a tensor for forward hooks (timm's AttentionExtract idea), and who watches it.
#
# Watching is explicit: every forward hook on a tap is registered through `register_forward_hook`, which also takes
# `live`, a function that says whether the hook acts for the current caller (default: always), and `records`, True
# for a hook that keeps what it sees across calls. The model asks `watched` before computing what only a watcher
# needs: unwatched attention runs a fused kernel that never forms the probabilities, and then the tap is not called
# at all. Hooks registered globally (`torch.nn.modules.module.register_module_forward_hook`) do not count as watchers.


def _always() -> bool:
    return True


class Tap(nn.Module):
    def __init__(self):
        super().__init__()
        self._watchers: dict[int, tuple[Callable[[], bool], bool]] = {}  # hook id -> (live, records)

    def forward(self, x: Tensor) -> Tensor:
        return x

    def register_forward_hook(self, hook: Callable, *, live: Callable[[], bool] | None = None, records: bool = False,
                              **kwargs) -> "TapHandle":
        """nn.Module.register_forward_hook, with the tap told who watches; the handle's remove() undoes both."""
        live = live or _always
        gated = hook if live is _always else (lambda module, args, output: hook(module, args, output) if live() else None)
        handle = super().register_forward_hook(gated, **kwargs)
        self._watchers[handle.id] = (live, records)
        return TapHandle(handle, self._watchers)

    @property
    def watched(self) -> bool:
        """True when a hook acts on this tap for the current caller."""
        watchers = list(self._watchers.values())  # a copy: another thread may register while we look
        return any(live() for live, _ in watchers)

    @property
    def n_watchers(self) -> int:
        """How many hooks are registered on this tap, for any caller."""
        return len(self._watchers)

    @property
    def recording(self) -> bool:
        """True when a hook that keeps what it sees across calls acts for the current caller."""
        return any(records and live() for live, records in list(self._watchers.values()))


class TapHandle:
    """What Tap.register_forward_hook returns: remove() takes the hook off and forgets the watcher."""

    def __init__(self, handle, watchers: dict):
        self.handle, self.watchers = handle, watchers

    def remove(self) -> None:
        self.handle.remove()
        self.watchers.pop(self.handle.id, None)

    def __enter__(self) -> "TapHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()
