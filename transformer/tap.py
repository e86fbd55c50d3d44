"""Tap: an identity module that marks a tensor for forward hooks (timm's AttentionExtract idea), and who watches it.

Watching is explicit: every forward hook on a tap is registered through `register_forward_hook`, which also takes
`live`, a function that says whether the hook acts for the current caller (default: always), and `records`, True
for a hook that keeps what it sees across calls. The model asks `watched` before computing what only a watcher
needs: unwatched attention runs a fused kernel that never forms the probabilities, and then the tap is not called
at all. Hooks registered globally (`torch.nn.modules.module.register_module_forward_hook`) do not count as watchers.
"""
from __future__ import annotations

from collections.abc import Callable

from torch import Tensor, nn


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


def recording(model) -> bool:
    """True when a hook that keeps what it sees across calls watches any tap of `model` for the current caller."""
    return isinstance(model, nn.Module) and any(isinstance(m, Tap) and m.recording for m in model.modules())
