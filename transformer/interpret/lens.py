"""What each decoder layer would say: the logit lens on our encoder-decoder.

Every decoder layer's output, read by a forward hook, goes through the model's own final layer norm (the
decoder's `final_norm`: a LayerNorm in a pre-norm model, nothing in a post-norm one, whose layers end in their
own) and the tied output projection. The last layer's lens is the model's own distribution.

Shape legend: L decoder layers, T target positions, V vocabulary.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from .capture import record


@dataclass
class Lens:
    """Per decoder layer and target position t: log p(next token) as that layer would predict it."""

    log_probs: Tensor  # (L, T, V)
    chosen: list[int]  # (T,) the token the model produced at each step (the teacher-forced next token)

    def top(self) -> tuple[Tensor, Tensor]:
        """Each layer's most probable token and its probability, (L, T) each."""
        best, ids = self.log_probs.max(dim=-1)
        return ids, best.exp()

    def chosen_prob(self) -> Tensor:
        """(L, T): each layer's probability of the token finally chosen."""
        index = torch.tensor(self.chosen)[None, :, None].expand(self.log_probs.size(0), -1, 1)  # (L, T, 1)
        return self.log_probs.gather(-1, index).squeeze(-1).exp()

    def chosen_rank(self) -> Tensor:
        """(L, T): 0 where the chosen token is the layer's top-1, else how many tokens it would rank above it."""
        chosen = self.log_probs.gather(-1, torch.tensor(self.chosen)[None, :, None].expand(
            self.log_probs.size(0), -1, 1))  # (L, T, 1)
        return (self.log_probs > chosen).sum(dim=-1)

    def first_top1_layer(self) -> list[int]:
        """(T,) the first layer whose top-1 is the chosen token, -1 where none is."""
        is_top = self.chosen_rank().eq(0)  # (L, T)
        return [int(col.nonzero()[0]) if bool(col.any()) else -1 for col in is_top.t()]

    def settled_layer(self) -> list[int]:
        """(T,) the first layer from which the top-1 is the chosen token at that layer and every later one: where
        the decoder settled on it; -1 where the last layer does not choose it (a sampled piece)."""
        is_top = self.chosen_rank().eq(0)  # (L, T)
        settled = []
        for col in is_top.t().tolist():  # one position's layers, first to last
            layer = len(col)
            while layer > 0 and col[layer - 1]:
                layer -= 1
            settled.append(layer if layer < len(col) else -1)
        return settled

    def earlier_choices(self) -> list[list[int]]:
        """(T,) per position, the tokens the layers before the settled one preferred, in order, each once: where
        the decoder changed its mind on the way (empty: it never preferred another)."""
        ids, _ = self.top()  # (L, T)
        out = []
        for t, layer in enumerate(self.settled_layer()):
            before = ids[: layer if layer >= 0 else ids.size(0), t].tolist()
            out.append([tok for tok in dict.fromkeys(before) if tok != self.chosen[t]])
        return out


@torch.inference_mode()
def logit_lens(model, src: Tensor, tgt_in: Tensor, chosen: list[int]) -> Lens:
    """src (1, S), tgt_in (1, T) = <s> and the translation; chosen: the T tokens that followed each position."""
    layers = [f"decoder.layers.{i}" for i in range(len(model.decoder.layers))]
    with record(model, layers) as seen:
        model(src, tgt_in)
    hidden = torch.stack([seen[name][0][0] for name in layers]).to(src.device)  # L x (T, D) -> (L, T, D)
    log_probs = model.generator(model.decoder.final_norm(hidden))  # (L, T, V)
    return Lens(log_probs.float().cpu(), list(chosen))
