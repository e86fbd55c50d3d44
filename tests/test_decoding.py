"""Greedy, sampling and beam search, on a hand-written probability table and on tiny random models."""
from __future__ import annotations

import itertools
import math
from dataclasses import replace

import pytest
import torch

from transformer import ModelConfig, beam_search, greedy, sample
from transformer.decoding import (BeamObserver, DecodeOptions, RunGuard, RunLimits, beam_step, decode, filter_logits,
                                  new_cache)
from transformer.tokenizer import run_limits

from conftest import random_tokens, runs

PAD, BOS, EOS, A, B, C = range(6)


class TableModel:
    """next-token probabilities looked up from the prefix; the prefix travels in the KV cache."""

    def __init__(self, table: dict[tuple[int, ...], dict[int, float]], default: dict[int, float]):
        self.cfg = ModelConfig(vocab_size=6, d_model=4, n_heads=1)
        self.table, self.default = table, default

    def encode(self, src):
        return torch.zeros(src.size(0), src.size(1), 1)

    def decode_step(self, tokens, memory, cache):
        cache.prefix = tokens if cache.prefix is None else torch.cat([cache.prefix, tokens], dim=1)  # (B, t)
        rows = []
        for prefix in cache.prefix.tolist():
            probs = torch.full((6,), 1e-9)
            for tok, p in self.table.get(tuple(prefix[1:]), self.default).items():
                probs[tok] = p
            rows.append(probs.log())
        return torch.stack(rows)  # (B, V)


# Greedy takes A (0.6) then A (0.4) then </s>: 0.24. "B </s>" has 0.36 but starts with the smaller step.
TABLE = {(): {A: 0.6, B: 0.4}, (A,): {A: 0.4, B: 0.3, EOS: 0.3}, (B,): {EOS: 0.9, A: 0.1}}
ENDS = {EOS: 1.0}


def one_source(n: int = 1) -> torch.Tensor:
    return torch.full((n, 3), A)


def test_greedy_on_the_table():
    hyp = greedy(TableModel(TABLE, ENDS), one_source(), max_len=10)[0]
    assert hyp.tokens == [A, A]
    assert hyp.score == pytest.approx(math.log(0.6 * 0.4 * 1.0), abs=1e-5)
    assert [s.token for s in hyp.steps] == [A, A, EOS]
    assert hyp.steps[0].prob == pytest.approx(0.6, abs=1e-6)
    assert [a for a, _ in hyp.steps[0].alternatives[:2]] == [A, B]
    assert hyp.steps[0].alternatives[1][1] == pytest.approx(0.4, abs=1e-6)


def test_beam_search_finds_the_more_probable_sentence():
    hyp = beam_search(TableModel(TABLE, ENDS), one_source(), max_len=10, beam_size=2, length_penalty=0.0)[0]
    assert hyp.tokens == [B]
    assert hyp.score == pytest.approx(math.log(0.4 * 0.9), abs=1e-5)
    assert [(s.token, round(s.prob, 4)) for s in hyp.steps] == [(B, 0.4), (EOS, 0.9)]


def test_length_penalty_favours_the_longer_sentence():
    hyp = beam_search(TableModel(TABLE, ENDS), one_source(), max_len=10, beam_size=2, length_penalty=1.0)[0]
    assert hyp.tokens == [A, A]  # log(0.24) / 3 > log(0.36) / 2
    assert hyp.score == pytest.approx(math.log(0.24) / 3, abs=1e-5)


def test_beam_of_one_is_greedy(model):
    src = random_tokens(3, 6, 40)
    assert [h.tokens for h in beam_search(model, src, 12, beam_size=1)] == [h.tokens for h in greedy(model, src, 12)]


def test_max_len_bounds_the_output():
    never_ends = TableModel({}, {A: 0.7, B: 0.3})
    assert len(greedy(never_ends, one_source(), max_len=7)[0].tokens) == 7
    assert len(beam_search(never_ends, one_source(), max_len=7, beam_size=3)[0].tokens) == 7


def test_temperature_zero_is_greedy(model):
    src = random_tokens(3, 6, 40)
    g = torch.Generator().manual_seed(0)
    assert [h.tokens for h in sample(model, src, 12, g, temperature=0)] == [h.tokens for h in greedy(model, src, 12)]


def test_a_seed_repeats_a_sample_and_another_seed_differs(model):
    src = random_tokens(6, 6, 40)

    def run(seed):
        return [h.tokens for h in sample(model, src, 12, torch.Generator().manual_seed(seed), temperature=1.5)]

    global_state = torch.random.get_rng_state()
    assert run(3) == run(3)
    assert run(3) != run(4)
    assert torch.equal(torch.random.get_rng_state(), global_state)  # the global RNG is never touched


FLAT = TableModel({}, {A: 0.5, B: 0.3, C: 0.15, EOS: 0.05})


@pytest.mark.parametrize("top_k, top_p, allowed", [(1, 1.0, {A}), (2, 1.0, {A, B}), (0, 0.7, {A, B}), (0, 0.4, {A})])
def test_top_k_and_top_p_never_leave_their_set(top_k, top_p, allowed):
    hyps = sample(FLAT, one_source(300), 6, torch.Generator().manual_seed(0), top_k=top_k, top_p=top_p)
    emitted = {s.token for h in hyps for s in h.steps}
    assert emitted == allowed  # every allowed token shows up, nothing else does


def test_sampling_without_limits_reaches_every_token():
    hyps = sample(FLAT, one_source(300), 6, torch.Generator().manual_seed(0))
    assert {s.token for h in hyps for s in h.steps} == {A, B, C, EOS}


def test_filter_logits_keeps_the_nucleus():
    log_probs = torch.tensor([[0.5, 0.3, 0.15, 0.05]]).log()
    kept = filter_logits(log_probs, 1.0, top_p=0.8).isfinite()
    assert kept.tolist() == [[True, True, False, False]]  # 0.5 + 0.3 reaches 0.8
    assert filter_logits(log_probs, 1.0, top_k=3).isfinite().sum() == 3


def test_steps_report_the_model_probabilities(model):
    src = random_tokens(1, 6, 40)
    hyp = greedy(model, src, 5)[0]
    memory, cache = model.encode(src), new_cache(model, src)
    tokens = torch.tensor([[model.cfg.bos_id]])
    for step in hyp.steps:
        probs = model.decode_step(tokens, memory, cache).exp()[0]
        assert step.prob == pytest.approx(probs[step.token].item(), rel=1e-5)
        alt_probs = [p for _, p in step.alternatives]
        assert alt_probs == sorted(alt_probs, reverse=True) and len(alt_probs) == 5
        assert step.alternatives[0][0] == step.token  # greedy chose the best alternative
        tokens = torch.tensor([[step.token]])


@pytest.mark.parametrize("fields, message", [
    ({"strategy": "fast"}, "unknown strategy"),
    ({"temperature": -1}, "temperature must be a number from 0 to 100"),
    ({"temperature": float("nan")}, "temperature must be"),
    ({"top_p": 0}, "top_p must be"),
    ({"top_k": 2.5}, "top_k must be a whole number"),
    ({"beam_size": 17}, "beam_size must be a whole number from 1 to 16"),
    ({"beam_size": "4"}, "beam_size must be"),
    ({"beam_size": True}, "beam_size must be"),
    ({"seed": None}, "seed must be"),
    ({"length_penalty": [1]}, "length_penalty must be"),
    ({"max_len": -1}, "max_len must be"),
    ({"top_p": 1.5}, "top_p must be"),
    ({"top_k": -3}, "top_k must be"),
    ({"beam_size": 0}, "beam_size must be"),
    ({"seed": "x"}, "seed must be"),
    ({"stutter_guard": "no"}, "stutter_guard must be true or false"),
])
def test_decode_options_refuse_bad_values_in_a_sentence(fields, message):
    with pytest.raises(ValueError, match=message):
        DecodeOptions(**fields)


def test_decode_options_normalise_and_bound_the_length():
    opts = DecodeOptions("beam", beam_size=4.0, seed=3.0, temperature=1, max_len=None)
    assert (type(opts.beam_size), type(opts.seed), type(opts.temperature), opts.max_len) == (int, int, float, 0)
    assert DecodeOptions().length_limit(8, 256) == 22  # automatic: 1.5 x 8 + 10
    assert DecodeOptions().length_limit(200, 256) == 255  # never past the model's positions
    assert DecodeOptions(max_len=7).length_limit(200, 256) == 7
    with pytest.raises(ValueError, match="max_len must be a whole number from 0 to 63 for this model"):
        DecodeOptions(max_len=64).length_limit(5, 64)


def test_decode_dispatches_on_the_strategy(model):
    src = random_tokens(2, 6, 40)
    expected = [h.tokens for h in greedy(model, src, 19)]  # the automatic bound for S = 6
    assert [h.tokens for h in decode(model, src, DecodeOptions())] == expected
    assert [h.tokens for h in decode(model, src, DecodeOptions("beam", beam_size=1))] == expected
    g = torch.Generator().manual_seed(0)
    assert [h.tokens for h in decode(model, src, DecodeOptions("sample", top_k=1), g)] == expected
    assert len(decode(model, src, DecodeOptions("greedy", max_len=3))[0].steps) <= 3


def test_a_beam_step_keeps_endings_ranked_in_the_beam_and_continues_the_rest():
    """The table's second step, two beams "A" (0.6) and "B" (0.4), taken alone: scores in, choices out."""
    log = lambda *ps: [math.log(p) if p else float("-inf") for p in ps]
    scores = torch.tensor([log(0.6, 0.4)])  # (n=1, K=2)
    #                            PAD BOS EOS  A    B    C
    log_probs = torch.tensor([log(0, 0, 0.3, 0.4, 0.3, 0),  # after "A"
                              log(0, 0, 0.9, 0.1, 0, 0)])  # after "B"
    step = beam_step(scores, log_probs, EOS, room=torch.tensor([2]), last=torch.tensor([False]))
    ranked = [(beam, tok, round(math.exp(s), 4)) for beam, tok, s in
              zip(step.beams[0].tolist(), step.tokens[0].tolist(), step.scores[0].tolist()) if s > -math.inf]
    assert ranked[:2] == [(1, EOS, 0.36), (0, A, 0.24)]
    assert sorted(ranked[2:4]) == [(0, EOS, 0.18), (0, B, 0.18)]  # a tie: either order
    assert step.ended[0].tolist()[:2] == [True, False] and step.ended.sum() == 1  # "A </s>" ranks third: pruned
    assert not step.done[0]
    kept = [step.tokens[0, j].item() for j in step.next_beams[0].tolist()]
    assert kept == [A, B] and step.next_scores[0].exp().tolist() == pytest.approx([0.24, 0.18])
    full = beam_step(scores, log_probs, EOS, room=torch.tensor([1]), last=torch.tensor([False]))
    assert full.done[0] and full.ended.sum() == 1  # the one ending it had room for: the sentence is done
    bound = beam_step(scores, log_probs, EOS, room=torch.tensor([2]), last=torch.tensor([True]))
    assert bound.done[0] and bound.ended[0, :2].all()  # on the last step the first K all end


def test_an_observer_sees_every_step_and_never_changes_the_search(model):
    class Counting(BeamObserver):
        def __init__(self):
            self.steps, self.chosen = [], None

        def step(self, t, sentences, step):
            self.steps.append((t, list(sentences), tuple(step.tokens.shape)))

        def finish(self, hypotheses, chosen):
            self.chosen = chosen

    src = random_tokens(2, 6, 40)
    seen = Counting()
    watched = beam_search(model, src, 9, beam_size=3, observer=seen)
    assert [h.tokens for h in watched] == [h.tokens for h in beam_search(model, src, 9, beam_size=3)]
    assert [t for t, _, _ in seen.steps] == sorted(t for t, _, _ in seen.steps) and seen.steps[0][:2] == (0, [0, 1])
    assert all(shape == (len(rows), 6) for _, rows, shape in seen.steps)  # (n, 2K)
    assert len(seen.chosen) == 2 and watched[0].tree is None


def test_beam_tree_records_the_search_on_the_table():
    hyp = beam_search(TableModel(TABLE, ENDS), one_source(), max_len=10, beam_size=2, length_penalty=0.0,
                      record_tree=True)[0]
    tree = hyp.tree
    at = lambda step, status: sorted((n.token, round(math.exp(n.log_prob), 4)) for n in tree.nodes
                                     if n.step == step and n.status == status)
    assert at(0, "live") == [(A, 0.6), (B, 0.4)]
    assert at(1, "live") == [(A, 0.24), (B, 0.18)]  # "A A" and "A B" continue
    assert at(1, "finished") == [(EOS, 0.36)]  # "B </s>" ends among the 2 best
    assert (EOS, 0.18) in at(1, "pruned")  # "A </s>" ranked below the beam: dropped
    assert at(2, "finished") == [(EOS, 0.24)] and (EOS, 0.18) in at(2, "pruned")  # two endings are enough
    path = [tree.nodes[i] for i in tree.path(tree.winner)]
    assert [n.token for n in path] == [B, EOS] and path[0].parent == -1
    assert path[-1].score == pytest.approx(hyp.score, abs=1e-6)  # the winner is the hypothesis returned
    for n in tree.nodes:  # every node extends a live node of the step before
        assert n.parent == -1 if n.step == 0 else tree.nodes[n.parent].status == "live"
        assert n.parent == -1 or tree.nodes[n.parent].step == n.step - 1
    longer = beam_search(TableModel(TABLE, ENDS), one_source(), max_len=10, beam_size=2, length_penalty=1.0,
                         record_tree=True)[0].tree
    winner = longer.nodes[longer.winner]
    assert [longer.nodes[i].token for i in longer.path(longer.winner)] == [A, A, EOS]
    assert winner.score == pytest.approx(math.log(0.24) / 3, abs=1e-5)


def test_beam_tree_of_one_beam_is_the_greedy_path(model):
    src = random_tokens(2, 6, 40)
    hyps = beam_search(model, src, 12, beam_size=1, record_tree=True)
    for hyp, g in zip(hyps, greedy(model, src, 12)):
        path = [hyp.tree.nodes[i].token for i in hyp.tree.path(hyp.tree.winner)]
        assert [t for t in path if t != model.cfg.eos_id] == g.tokens
    assert beam_search(model, src, 12, beam_size=1)[0].tree is None  # recorded only when asked


def test_beam_trees_of_a_batch_are_each_sentences_own_search(model):
    """Three sentences of different lengths, three beams: every tree is the one the sentence makes alone."""
    src = random_tokens(3, 7, 40, seed=4)
    src[1, 4:], src[2, 2:] = 0, 0
    batched = beam_search(model, src, 10, beam_size=3, record_tree=True)
    assert len({id(h.tree) for h in batched}) == 3
    for b, hyp in enumerate(batched):
        alone = beam_search(model, src[b : b + 1, : int(src[b].ne(0).sum())], 10, beam_size=3, record_tree=True)[0]
        nodes = lambda tree: [(n.step, n.parent, n.token, n.status, round(n.log_prob, 4)) for n in tree.nodes]
        assert nodes(hyp.tree) == nodes(alone.tree) and hyp.tree.winner == alone.tree.winner
        per_step = {}
        for n in hyp.tree.nodes:
            per_step.setdefault(n.step, []).append(n)
        assert all(len(ns) <= 2 * 3 for ns in per_step.values())  # the 2K best candidates of each step
        assert max(sum(n.status == "live" for n in ns) for ns in per_step.values()) == 3  # several beams alive
        path = [hyp.tree.nodes[i].token for i in hyp.tree.path(hyp.tree.winner)]
        assert [t for t in path if t != model.cfg.eos_id] == hyp.tokens


@pytest.mark.parametrize("strategy", ["greedy", "beam"])
def test_the_automatic_length_bound_is_each_sentences_own(strategy):
    """A model that never says </s>: the short sentence stops at its own bound, alone or beside a long one."""
    never_ends = TableModel({}, {A: 0.6, B: 0.4})
    src = torch.full((2, 20), A)
    src[0, 3:] = PAD  # three tokens beside twenty
    options = DecodeOptions(strategy, beam_size=2)
    bound = options.length_limit(3, never_ends.cfg.max_len)
    alone = decode(never_ends, src[:1, :3], options, record_tree=True)[0]
    batched = decode(never_ends, src, options, record_tree=True)
    assert len(alone.steps) == bound and batched[0].tokens == alone.tokens
    assert batched[0].score == pytest.approx(alone.score, abs=1e-6)
    assert len(batched[1].steps) == options.length_limit(20, never_ends.cfg.max_len) > bound
    if strategy == "beam":  # the same search, step for step
        assert [(n.step, n.token, n.status) for n in batched[0].tree.nodes] == \
            [(n.step, n.token, n.status) for n in alone.tree.nodes]


# -----------------------------------------------------------------------------
# The stutter guard (RunGuard): no piece more times in a row than its limit

STUTTERS = TableModel({}, {A: 0.7, B: 0.2, EOS: 0.1})  # A forever, unless something stops it
A_TWICE = RunLimits(torch.tensor([0, 0, 0, 2, 0, 0]))  # A at most twice in a row; the rest unlimited


def longest_run(tokens: list[int], of: int | None = None) -> int:
    """The most times one token (or token `of`) comes in a row."""
    return max((n for tok, n in runs(tokens) if of in (None, tok)), default=0)


def test_the_guard_stops_a_piece_at_its_limit_and_takes_the_next_choice():
    assert greedy(STUTTERS, one_source(), 9)[0].tokens == [A] * 9
    hyp = greedy(STUTTERS, one_source(), 9, run_limits=A_TWICE)[0]
    assert hyp.tokens == [A, A, B, A, A, B, A, A, B]
    assert [s.guarded for s in hyp.steps] == [False, False, True] * 3  # where the model's first choice was removed
    assert hyp.steps[2].removed == (A, pytest.approx(0.7, abs=1e-6)) and hyp.steps[1].removed is None  # and its p
    assert hyp.steps[2].prob == pytest.approx(0.2, abs=1e-6)  # the model's own probability of its next choice
    assert A not in [a for a, _ in hyp.steps[2].alternatives]  # what the guard removed is no alternative
    beams = beam_search(STUTTERS, one_source(2), 9, beam_size=3, run_limits=A_TWICE)
    assert max(longest_run(h.tokens, A) for h in beams) == 2
    for h in beams:  # a step is marked where the run before it was full: the model's first choice, A, was removed
        full = [i >= 2 and h.tokens[i - 2:i] == [A, A] for i in range(len(h.steps))]
        assert [s.guarded for s in h.steps] == full
        assert all(s.removed == (A, pytest.approx(0.7, abs=1e-6)) for s, f in zip(h.steps, full) if f)
    samples = sample(STUTTERS, one_source(200), 9, torch.Generator().manual_seed(0), run_limits=A_TWICE)
    assert max(longest_run(h.tokens, A) for h in samples) == 2


def test_a_full_run_also_stops_the_pieces_that_begin_with_it():
    vocabulary = ["<pad>", "<s>", "</s>", "is", "issez", "sez"]  # A, B, C
    model = TableModel({}, {A: 0.5, B: 0.3, C: 0.15, EOS: 0.05})
    limits = run_limits(vocabulary)
    assert limits.limit.tolist() == [0, 0, 0, 2, 2, 2] and limits.repeating[A] == [A, B]
    hyp = greedy(model, one_source(), 4, run_limits=limits)[0]
    assert hyp.tokens == [A, A, C, A]  # "isis" + "sez": no "isisis"
    assert [s.guarded for s in hyp.steps] == [False, False, True, False]


@pytest.mark.parametrize("strategy", ["greedy", "sample", "beam"])
def test_the_guard_follows_each_row_when_rows_end_and_beams_move(model, strategy):
    """Each piece at most once in a row: a batch decodes as its sentences do alone, and no row repeats a piece."""
    src = random_tokens(5, 7, 40)
    once = RunLimits(torch.ones(model.cfg.vocab_size, dtype=torch.long))
    opts = DecodeOptions(strategy, temperature=1.5, beam_size=3, max_len=12)
    batch = decode(model, src, opts, torch.Generator().manual_seed(1), run_limits=once)
    assert all(longest_run(h.tokens) <= 1 for h in batch)
    alone = [decode(model, src[i:i + 1], opts, torch.Generator().manual_seed(1), run_limits=once)[0] for i in range(5)]
    if strategy != "sample":  # a sample draws from one generator across the batch
        assert [h.tokens for h in batch] == [h.tokens for h in alone]
    off = decode(model, src, replace(opts, stutter_guard=False), torch.Generator().manual_seed(1), run_limits=once)
    assert [h.tokens for h in off] == [h.tokens for h in decode(model, src, opts, torch.Generator().manual_seed(1))]
    assert max(longest_run(h.tokens) for h in off) > 1  # unguarded, this random model does repeat itself


def test_a_word_comes_at_most_twice_in_a_row_and_then_the_model_goes_on():
    vocabulary = ["<pad>", "<s>", "</s>", "\u2581carte", "\u2581cartes", "s"]  # A, B, C
    model = TableModel({}, {A: 0.6, B: 0.25, C: 0.1, EOS: 0.05})  # "carte" forever, unless something stops it
    limits = run_limits(vocabulary)
    assert limits.limit.tolist() == [0, 0, 0, 2, 2, 3] and A not in limits.repeating  # a word stops itself alone
    hyp = greedy(model, one_source(), 4, run_limits=limits)[0]
    assert hyp.tokens == [A, A, B, A]  # "carte carte cartes carte": twice, then the next choice
    assert [s.guarded for s in hyp.steps] == [False, False, True, False]
    assert hyp.steps[2].prob == pytest.approx(0.25)  # with the model's own probability


def by_last_piece(rule: dict[int | None, dict[int, float]], longest: int = 9) -> dict[tuple[int, ...], dict]:
    """A TableModel's table where the next piece depends on the last one alone (None: the first step)."""
    return {p: rule[p[-1] if p else None] for n in range(longest) for p in itertools.product((A, B, C), repeat=n)}


# "▁St·ate ▁St·ate ▁St·ate ...": each piece once in a row, the word over and over, unless something stops it
STATE = ["<pad>", "<s>", "</s>", "\u2581St", "ate", "ates"]  # A, B, C
STATE_RULE = {None: {A: 0.9, EOS: 0.1}, A: {B: 0.7, C: 0.2, EOS: 0.1}, B: {A: 0.8, EOS: 0.2}, C: {EOS: 0.9, A: 0.1}}


def test_a_word_of_several_pieces_comes_at_most_twice_in_a_row():
    model, limits = TableModel(by_last_piece(STATE_RULE), ENDS), run_limits(STATE)
    assert limits.word_part == [0, 0, 0, 1, 2, 2]  # where a word begins, and goes on
    hyp = greedy(model, one_source(), 8, run_limits=limits)[0]
    assert hyp.tokens == [A, B, A, B, A, C]  # "State State States": twice, then the next choice, then the end
    assert [s.guarded for s in hyp.steps] == [False] * 5 + [True, False]
    assert hyp.steps[5].prob == pytest.approx(0.2)  # with the model's own probability
    unwatched = replace(limits, word_part=[])  # the pieces' limits alone let the word go on
    assert greedy(model, one_source(), 8, run_limits=unwatched)[0].tokens == [A, B] * 4


def test_the_guard_follows_each_beams_words_as_beams_move():
    guard = RunGuard(run_limits(STATE), 2, torch.device("cpu"))
    for row0, row1 in [(A, A), (B, C), (A, A), (B, B)]:  # "▁St·ate ▁St·ate", "▁St·ates ▁St·ate"
        guard.advance(torch.tensor([row0, row1]))
    assert guard.word_ends == []
    guard.advance(torch.tensor([A, A]), torch.tensor([1, 0]))  # the beams swap: row 1 goes on from row 0
    assert guard.word_ends == [(1, B)]  # "State State St": not "ate" a third time
    log_probs = guard.forbid(torch.zeros(2, 6))
    assert log_probs[1, B] == float("-inf") and log_probs[1].isfinite().sum() == 5 and log_probs[0].isfinite().all()
    guard.select(torch.tensor([1]))  # row 0's sentence finished
    assert guard.word_ends == [(0, B)]


def test_a_word_said_again_after_punctuation_is_no_stutter():
    comma = ["<pad>", "<s>", "</s>", "\u2581St", "ate", ","]  # A, B, C: "State, State, State,"
    rule = {None: {A: 0.9, EOS: 0.1}, A: {B: 0.9, EOS: 0.1}, B: {C: 0.9, EOS: 0.1}, C: {A: 0.9, EOS: 0.1}}
    hyp = greedy(TableModel(by_last_piece(rule), ENDS), one_source(), 9, run_limits=run_limits(comma))[0]
    assert hyp.tokens == [A, B, C] * 3 and not any(s.guarded for s in hyp.steps)


def test_a_phrase_of_two_words_is_not_said_twice_in_a_row():
    late = ["<pad>", "<s>", "</s>", "\u2581zu", "\u2581sp\u00e4t", "\u2581sehr"]  # A, B, C: "zu spät zu spät ..."
    rule = {None: {A: 0.9, EOS: 0.1}, A: {B: 0.9, C: 0.06, EOS: 0.04}, B: {A: 0.8, EOS: 0.2}, C: {EOS: 1.0}}
    model, limits = TableModel(by_last_piece(rule), ENDS), run_limits(late)
    hyp = greedy(model, one_source(), 8, run_limits=limits)[0]
    assert hyp.tokens == [A, B, A, C]  # "zu spät zu sehr": not "spät" again, the next choice with its own 0.06
    assert [s.guarded for s in hyp.steps] == [False, False, False, True, False]
    assert hyp.steps[3].prob == pytest.approx(0.06)
    # each piece's own limit (none comes twice in a row) lets the phrase go on
    assert greedy(model, one_source(), 8, run_limits=replace(limits, word_part=[]))[0].tokens == [A, B] * 4


def test_a_phrase_of_words_of_several_pieces_is_not_said_twice_in_a_row():
    shot = ["<pad>", "<s>", "</s>", "\u2581Sh", "ot", "on"]  # A, B, C: "Shot" is A·B, "Shon" A·C
    said = [A, B, A, C, A, B, A]  # "Shot Shon Shot Sh", then "on" is the model's first choice
    table = {tuple(said[:n]): {said[n]: 1.0} for n in range(len(said))} | {tuple(said): {C: 0.6, B: 0.3, EOS: 0.1}}
    hyp = greedy(TableModel(table, ENDS), one_source(), 10, run_limits=run_limits(shot))[0]
    assert hyp.tokens == said + [B]  # "Shot Shon Shot Shot", not "Shot Shon Shot Shon"
    assert [s.guarded for s in hyp.steps] == [False] * 7 + [True, False]


def test_the_guard_sees_phrases_of_three_words_and_none_across_punctuation():
    walk = ["<pad>", "<s>", "</s>", "\u2581ein", "\u2581Mann", ","]  # A, B, C
    guard = RunGuard(run_limits(walk), 1, torch.device("cpu"))
    for piece in (A, B, A):
        guard.advance(torch.tensor([piece]))
    assert guard.phrase_ends == [(0, B)]  # "ein Mann ein": not "Mann" now
    guard = RunGuard(run_limits(walk), 1, torch.device("cpu"))
    for piece in (A, B, C, A):
        guard.advance(torch.tensor([piece]))
    assert guard.phrase_ends == []  # "ein Mann, ein Mann" is said as the writer meant
    three = ["<pad>", "<s>", "</s>", "\u2581ein", "\u2581Mann", "\u2581geht"]  # "ein Mann geht ein Mann": not "geht"
    guard = RunGuard(run_limits(three), 1, torch.device("cpu"))
    for piece in (A, B, C, A, B):
        guard.advance(torch.tensor([piece]))
    assert guard.phrase_ends == [(0, C)]


def test_a_letter_comes_at_most_three_times_in_a_row_across_pieces():
    stef = ["<pad>", "<s>", "</s>", "\u2581Stef", "f", "e"]  # A, B, C: "Stef·f·f·f·e" unless something stops it
    rule = {None: {A: 0.9, EOS: 0.1}, A: {B: 0.9, EOS: 0.1}, B: {B: 0.8, C: 0.15, EOS: 0.05}, C: {EOS: 1.0}}
    model, limits = TableModel(by_last_piece(rule), ENDS), run_limits(stef)
    assert limits.letters == ["", "", "", "Stef", "f", "e"] and limits.beginning_with["f"] == [B]
    hyp = greedy(model, one_source(), 8, run_limits=limits)[0]
    assert hyp.tokens == [A, B, B, C]  # "Steff·f·e": three f, then the next choice ("Schiff·f·ahrt" stays possible)
    assert [s.guarded for s in hyp.steps] == [False, False, False, True, False]
    # the pieces' own limit (a single letter three times) alone lets a fourth f through
    assert greedy(model, one_source(), 8, run_limits=replace(limits, letters=[]))[0].tokens == [A, B, B, B, C]


def test_run_limits_hold_letters_inside_a_word():
    pieces = ["<pad>", "<s>", "</s>", "<unk>", "\u2581G", "ev", "f", "\u2581", "3", "<0x41>", "!", "\u2581sehr", "é",
              "fahrt"]
    limits = run_limits(pieces)
    assert limits.limit.tolist() == [0, 0, 0, 0, 2, 2, 3, 0, 0, 0, 0, 2, 3, 2]  # a word ("▁sehr") twice
    assert limits.repeating[6] == [6, 13] and limits.repeating[5] == [5] and 4 not in limits.repeating
    assert 11 not in limits.repeating  # a word's run stops that word alone
