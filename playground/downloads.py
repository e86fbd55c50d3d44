"""Every file the page offers for download, written under a fresh name in one folder and pruned by one rule:
a file of any kind older than KEEP_S goes when the next one is written."""
from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

from transformer.interpret.capture import KINDS

KEEP_S = 3600.0  # a download link stays valid this long


def write(folder: str | Path, stem: str, payload: dict | str, keep_s: float = KEEP_S, suffix: str = ".json") -> Path:
    """payload in folder/<stem>-<random><suffix>: a dict as JSON, a string as it is; every file in the folder older
    than keep_s is removed first."""
    folder = Path(folder)
    for old in folder.glob("*"):
        try:
            if time.time() - old.stat().st_mtime > keep_s:
                old.unlink(missing_ok=True)
        except FileNotFoundError:  # another request pruned it between the listing and the look
            pass
    path = folder / f"{stem}-{uuid.uuid4().hex[:12]}{suffix}"
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload), encoding="utf-8")
    return path


def rounded(rows):
    """Nested lists of floats (a tensor's tolist()) rounded to 5 decimals: a third of the bytes, nothing a plot shows."""
    return [rounded(r) for r in rows] if isinstance(rows, list) else round(float(rows), 5)


def attention_payload(maps) -> dict:
    """The maps as nested lists (L, H, query, key) with their token labels."""
    return {k: rounded(getattr(maps, k).tolist()) for k in KINDS} | {
        "source_tokens": maps.source_tokens, "target_tokens": maps.target_tokens}


def rollout_payload(rollouts: dict) -> dict:
    """Per self-attention kind (views/rollout.py's rollout_maps): the last layer's mean of heads, the rollout, the tokens."""
    return {kind: {"last_layer_mean": rounded(last.tolist()), "rollout": rounded(rolled.tolist()), "tokens": tokens}
            for kind, (last, rolled, tokens) in rollouts.items()}


def used_payload(expl, lens, training) -> dict:
    """Every number of the "What the model used" view: the attributions, the deletion test, the source shares,
    the logit lens (top-1 per layer and step, p of the final token) and the lens over training."""
    ids, probs = lens.top()
    payload = expl.to_dict() | {"lens": {
        "top_ids": ids.tolist(), "top_prob": rounded(probs.tolist()),
        "final_token_prob": rounded(lens.chosen_prob().tolist()), "first_top1_layer": lens.first_top1_layer()}}
    if training is not None:
        stages, shares = training
        payload["lens_over_training"] = {"stages": stages, "top1_is_final_share": shares.tolist()}
    return payload
