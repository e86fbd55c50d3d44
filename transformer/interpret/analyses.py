"""What the page and the API ask of a translator, read through hooks: plain functions that take a Translator and
return results labelled with its pieces. The Translator itself loads, tokenizes, translates and teacher-forces."""
from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch

from ..tokenizer import pad_batch
from ..decoding import DecodeOptions, WithoutCache, greedy, new_cache
from ..translator import Translation, Translator
from . import attribution, patching
from .capture import AttentionInternals, AttentionMaps, ablate_heads, capture_attention, capture_internals, record
from .lens import Lens, logit_lens


@dataclass
class Inspection:
    """What the hooks saw in one teacher-forced pass."""

    maps: AttentionMaps
    source_embedded: torch.Tensor  # (S, D): sqrt(d_model) * embedding, before the positional encoding
    source_input: torch.Tensor  # (S, D): embedding + PE, the first encoder layer's input
    target_embedded: torch.Tensor  # (T, D)
    target_input: torch.Tensor  # (T, D)
    internals: dict[str, list[AttentionInternals]] | None = None  # inspect(internals=True): per kind and layer,
    # Q, K, V, the mask, W^O's input and output


def inspect(translator: Translator, text: str, translation: str | Translation,
            ablate: Iterable[tuple[str, int, int]] = (), internals: bool = False) -> Inspection:
    """One teacher-forced pass over (text, translation) with hooks on every attention tap and on the
    positional encoding. The target side is the decoder's input: <s> then the translation, so
    row t of a decoder or cross map is what the model looked at when it predicted target token t+1.
    internals: also record each attention block's Q, K, V, mask and W^O input and output (capture_internals).
    """
    return inspect_many(translator, [text], [translation], ablate, internals)[0]


@torch.inference_mode()
def inspect_many(translator: Translator, texts: Sequence[str], translations: Sequence[str | Translation],
                 ablate: Iterable[tuple[str, int, int]] = (), internals: bool = False) -> list[Inspection]:
    """`inspect` for several sentences in one padded teacher-forced pass (a class translating at once): each
    sentence's maps and layer inputs cut to its own lengths, the same numbers as a pass of its own (internals, when
    asked for, keep the batch's padding)."""
    model, tok, pad = translator.model, translator.tokenizer, translator.cfg.pad_id
    pairs = [translator.pair_tensors(text, t) for text, t in zip(texts, translations)]  # each (1, S), (1, T)
    src = pad_batch([s[0].tolist() for s, _ in pairs], pad).to(translator.device)  # (B, S)
    tgt = pad_batch([t[0].tolist() for _, t in pairs], pad).to(translator.device)  # (B, T)
    inner = capture_internals(model) if internals else contextlib.nullcontext()
    with ablate_heads(model, ablate), capture_attention(model) as recorder, \
            record(model, ["positional"], inputs=True) as inputs, inner as inside:
        model(src, tgt)
    ((src_emb,), src_in), ((tgt_emb,), tgt_in) = inputs["positional"]  # encode() runs first: (B, S, D), (B, T, D)
    lengths = [(s.size(1), t.size(1)) for s, t in pairs]
    out = []
    for b, (maps, (S, T), (s, t)) in enumerate(zip(recorder.sentences(lengths), lengths, pairs)):
        maps.source_tokens, maps.target_tokens = tok.source_pieces(s[0].tolist()), tok.pieces(t[0].tolist())
        out.append(Inspection(maps, src_emb[b, :S].clone(), src_in[b, :S].clone(), tgt_emb[b, :T].clone(),
                              tgt_in[b, :T].clone(), inside and inside.sentence(b)))
    return out


def ablated(translator: Translator, text: str, options: DecodeOptions | None = None,
            heads: Iterable[tuple[str, int, int]] = ()) -> Translation:
    """The translation of `text` with `heads` (kind, layer, head) switched off while it is made (ablate_heads)."""
    with ablate_heads(translator.model, heads):
        return translator.translate(text, options)


def attention(translator: Translator, text: str, translation: str | Translation,
              ablate: Iterable[tuple[str, int, int]] = ()) -> AttentionMaps:
    """Every attention map of one teacher-forced pass: encoder (L, H, S, S), decoder (L, H, T, T),
    cross (L, H, T, S), with token labels; see `inspect`."""
    return inspect(translator, text, translation, ablate).maps


@torch.inference_mode()
def inspect_batch(translator: Translator, texts: Sequence[str], translations: Sequence[str | Translation]) -> list[dict]:
    """One teacher-forced pass over several sentences at once, padded as a batch is: per sentence, what
    capture_internals saw (masks with their padding), plus its "source_pad" and "target_pad" (bool, (S,), (T,))."""
    model, tok, pad = translator.model, translator.tokenizer, translator.cfg.pad_id
    src = pad_batch([translator.source_ids(t)[0] for t in texts], pad).to(translator.device)  # (B, S)
    tgt = pad_batch([translator.decoder_input(t) for t in translations], pad).to(translator.device)  # (B, T)
    with capture_internals(model) as inside:
        model(src, tgt)
    return [inside.sentence(b) | {"source_pad": src[b].eq(pad).cpu(), "target_pad": tgt[b].eq(pad).cpu(),
                                  "source_tokens": tok.source_pieces(src[b].tolist()),
                                  "target_tokens": tok.pieces(tgt[b].tolist())}
            for b in range(len(texts))]


def lens(translator: Translator, text: str, translation: str | Translation) -> Lens:
    """The logit lens of one teacher-forced pass: what each decoder layer would predict at every step of
    `translation`, read by hooks on the decoder layers."""
    src, tgt = translator.pair_tensors(text, translation)
    return logit_lens(translator.model, src, tgt, translator.followers(tgt))


def explain(translator: Translator, text: str, translation: str | Translation, step: int = 0,
            alternative: str | int | None = None, ig_steps: int = 64) -> attribution.Explanation:
    """What the model used for output token `step` of `translation` (its last step is </s>): attention,
    attention x norm, gradient x input, integrated gradients, ALTI+ and rollout over the source and the target
    prefix, the deletion test, and every step's source share (attribution.explain).
    alternative: a token (piece or id) for the contrastive question "why this token and not that one?"."""
    tok = translator.tokenizer
    src, tgt = translator.pair_tensors(text, translation)
    chosen = translator.followers(tgt)
    if isinstance(alternative, str):
        alternative = tok.piece_to_id(alternative)
    labels = {"source_tokens": tok.source_pieces(src[0].tolist()), "decoder_inputs": tok.pieces(tgt[0].tolist()),
              "output_tokens": tok.pieces(chosen)}
    return attribution.explain(translator.model, src, tgt, chosen, int(step), alternative, int(ig_steps), labels)


def patch(translator: Translator, first: str, second: str, direction: str = "denoising",
          sites: Sequence[str] | None = None) -> patching.Patching:
    """Activation patching for a minimal pair: both sentences translated greedily; at the first piece where the
    translations differ, which encoder positions, decoder positions and heads carry the difference.
    direction: "denoising" (the first sentence's activations into the second's run) or "noising" (the other way).
    The result's `labels` name the pieces."""
    tok, eos = translator.tokenizer, translator.cfg.eos_id
    a, b = translator.translate(first), translator.translate(second)
    src_a = torch.tensor([translator.source_ids(first)[0]], device=translator.device)  # (1, S1)
    src_b = torch.tensor([translator.source_ids(second)[0]], device=translator.device)  # (1, S2)
    t = patching.first_difference(a.target_ids, b.target_ids, eos)
    labels = {"first_source": tok.source_pieces(src_a[0].tolist()),
              "second_source": tok.source_pieces(src_b[0].tolist()),
              "prefix": tok.pieces([translator.cfg.bos_id] + a.target_ids[:t]),
              "first_translation": a.text, "second_translation": b.text,
              "first_piece": tok.pieces([(a.target_ids + [eos])[t]])[0],
              "second_piece": tok.pieces([(b.target_ids + [eos])[t]])[0]}
    return patching.patch(translator.model, src_a, src_b, a.target_ids, b.target_ids, direction,
                          tuple(sites) if sites is not None else patching.SITES, labels)


@dataclass
class Commitment:
    """When each output piece was decided (analyses.commitment)."""

    pieces: list[str]  # the translation's pieces and </s>
    settled: list[int]  # per piece, the decoder layer (from 1) from which the logit lens's top choice is that piece
    # and stays so; 0 where the last layer does not choose it (a piece the stutter guard, sampling or beam search chose)
    earlier: list[list[str]]  # per piece, what the layers before that one preferred, in order: a change of mind
    encoder_layers: int  # with how many encoder layers (DecoderLens) the translation comes out the same, and stays so
    decoder_layers: int
    encoder_total: int


def commitment(translator: Translator, text: str, translation: str | Translation | None = None) -> Commitment:
    """For each piece of `translation` (by default the greedy one): the first decoder layer from which the logit
    lens's top choice is that piece and stays so, and the pieces the earlier layers preferred; and, on the encoder
    side (DecoderLens), with how many encoder layers the greedy translation would already come out the same."""
    made = translator.translate(text) if translation is None else translation
    read = lens(translator, text, made)
    tok = translator.tokenizer
    by_encoder = decoder_lens(translator, text)
    same = [t.text == by_encoder[-1].text for t in by_encoder]  # the last is the model's own
    enough = len(same)
    while enough > 1 and same[enough - 2]:
        enough -= 1
    return Commitment(tok.pieces(read.chosen), [layer + 1 for layer in read.settled_layer()],
                      [tok.pieces(ids) for ids in read.earlier_choices()], enough, read.log_probs.size(0),
                      len(by_encoder))


def decoder_lens(translator: Translator, text: str) -> list[Translation]:
    """DecoderLens: per encoder layer (from the first), the greedy translation the decoder writes when it reads
    that layer's output as its memory; the last is the model's own translation."""
    source = translator.source_ids(text)
    src = torch.tensor([source[0]], device=translator.device)  # (1, S)
    limit = DecodeOptions().length_limit(src.size(1), translator.cfg.max_len)
    lens = patching.decoder_lens(translator.model, src, limit, translator.run_limits)  # decoded as translate does
    return [translator.to_translation(source, hyp) for hyp in lens]


@dataclass
class CacheTrace:
    """What the decoder keeps from step to step (analyses.decoder_cache): read from the KVCache that decode_step
    fills, after every step. Step t (from 0) reads target[t] and writes outputs[t]."""

    source: list[str]  # the source's pieces (S), </s> included
    target: list[str]  # the decoder's input, one piece a step: <s> and the translation (T)
    outputs: list[str]  # the piece written at each step: the translation and </s> (T)
    self_shapes: list[list[tuple[int, ...]]]  # per step, per layer: the self-attention keys' shape (H, t + 1, Dh);
    # the values' is the same
    cross_shapes: list[list[tuple[int, ...]]]  # per step, per layer: the cross-attention keys' shape (H, S, Dh)
    cross_kept: list[bool]  # per step: every layer's cross-attention keys and values the very tensors of step 0
    nbytes: list[int]  # per step: the cache's bytes (keys and values, self and cross, every layer)
    self_k: list[torch.Tensor]  # per layer, (H, T, Dh) after the last step; row t was added at step t, and rows never
    self_v: list[torch.Tensor]  # change once added, so the cache after step t is rows 0..t
    cross_k: list[torch.Tensor]  # per layer, (H, S, Dh): computed at step 0 from the encoder's output
    cross_v: list[torch.Tensor]


def _shapes(tensors: list) -> list[tuple[int, ...]]:
    return [tuple(t.shape[1:]) for t in tensors]  # (1, H, n, Dh) -> (H, n, Dh)


@torch.inference_mode()
def decoder_cache(translator: Translator, text: str, translation: str | Translation | None = None) -> CacheTrace:
    """Decode `translation` (by default the greedy one) step by step as the decoding loops do, through
    model.decode_step and a real KVCache, and read the cache after every step."""
    made = translator.translate(text) if translation is None else translation
    src, tgt = translator.pair_tensors(text, made)  # (1, S), (1, T)
    model = translator.model
    memory, cache = model.encode(src), new_cache(model, src)  # (1, S, D)
    self_shapes, cross_shapes, kept, nbytes, first = [], [], [], [], None
    for t in range(tgt.size(1)):
        model.decode_step(tgt[:, t:t + 1], memory, cache)  # (1, 1): one piece, after the t cached ones
        first = first or list(cache.cross_k + cache.cross_v)
        self_shapes.append(_shapes(cache.self_k))
        cross_shapes.append(_shapes(cache.cross_k))
        kept.append(all(a is b for a, b in zip(cache.cross_k + cache.cross_v, first)))
        nbytes.append(sum(x.numel() * x.element_size() for x in cache.self_k + cache.self_v + cache.cross_k
                          + cache.cross_v))
    tok = translator.tokenizer
    return CacheTrace(tok.source_pieces(src[0].tolist()), tok.pieces(tgt[0].tolist()),
                      tok.pieces(translator.followers(tgt)), self_shapes, cross_shapes, kept, nbytes,
                      [k[0].cpu() for k in cache.self_k], [v[0].cpu() for v in cache.self_v],
                      [k[0].cpu() for k in cache.cross_k], [v[0].cpu() for v in cache.cross_v])


@dataclass
class CacheTiming:
    """One sentence decoded greedily with the KV cache and without it (analyses.cache_timing)."""

    with_cache: str
    without_cache: str
    steps: int  # pieces written, </s> included
    cached_s: float  # the fastest of the repeats, each way
    uncached_s: float

    @property
    def ratio(self) -> float:
        """How many times longer the decoder takes without the cache."""
        return self.uncached_s / self.cached_s


def cache_timing(translator: Translator, text: str, repeats: int = 3) -> CacheTiming:
    """Time greedy decoding of `text` with the cache and without it (every step runs the decoder over the whole
    prefix again), the two alternating, `repeats` times each; both write their translation."""
    source = translator.source_ids(text)
    src = torch.tensor([source[0]], device=translator.device)  # (1, S)
    limit = DecodeOptions().length_limit(src.size(1), translator.cfg.max_len)
    best = {True: math.inf, False: math.inf}
    hyps = {}
    for _ in range(repeats):
        for cached in (True, False):
            model = translator.model if cached else WithoutCache(translator.model)
            start = time.perf_counter()
            hyps[cached] = greedy(model, src, limit, translator.run_limits)[0]
            best[cached] = min(best[cached], time.perf_counter() - start)
    made = {cached: translator.to_translation(source, hyp).text for cached, hyp in hyps.items()}
    return CacheTiming(made[True], made[False], len(hyps[True].steps), best[True], best[False])
