"""A from-scratch encoder-decoder Transformer (Vaswani et al. 2017) with hooks, a KV cache and decoding."""
from .interpret.capture import AttentionMaps, ablate_heads, capture_attention
from .checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from .config import ModelConfig, TrainConfig
from .decoding import DecodeOptions, KVCache, beam_search, decode, greedy, sample
from .errors import InputError
from .model import Transformer
from .model import Tap
from .training.schedule import noam_lr
from .tokenizer import Tokenizer
from .translator import Translation, Translator

__all__ = [
    "AttentionMaps", "CheckpointError", "DecodeOptions", "InputError", "KVCache", "ModelConfig", "Tap", "TrainConfig", "Tokenizer",
    "Transformer", "Translation", "Translator", "ablate_heads", "beam_search", "capture_attention", "decode", "greedy",
    "load_checkpoint", "noam_lr", "sample", "save_checkpoint",
]
