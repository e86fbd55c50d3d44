"""The playground's page, one module per view: each builds its layout and owns its handlers.

Every view is a `playground.view.View` built inside a gr.Blocks context, inside its own tab (`self.tab`). `fill(result,
values)` returns the {component: value} updates that show a translation (values maps every component in
`controls` to what the page holds); `on_pair(translator, pair, values)` those for a newly chosen checkpoint
(reading `pair_inputs`, setting `pair_outputs`); `wire(result)` attaches the view's own events. The page calls
them when the view's tab is seen, once per translation and per pair, through `View.guarded`: a view that fails
says so in its own notice and the others go on. Handlers return dicts, never positional tuples, and can be
called directly in tests.
"""
from __future__ import annotations

from .ablation import AblationView
from .attention import AttentionView
from .beam_tree import BeamTreeView
from .bertviz import BertvizView
from .card import CardView
from .compare import CompareView
from .families import FamiliesView
from .glance import GlanceView
from .inside import InsideHeadView
from .lesson import LessonView
from .live import LiveView
from .patching import PatchingView
from .positional import PositionalView
from .rollout import RolloutView
from .schedule import ScheduleView
from .steps import StepsView
from .timeline import TimelineView
from .used import UsedView

# each key of playground.registry -> the class that builds its view
CLASSES = {
    "glance": GlanceView,
    "lesson": LessonView,
    "steps": StepsView,
    "beam_tree": BeamTreeView,
    "attention": AttentionView,
    "inside": InsideHeadView,
    "families": FamiliesView,
    "rollout": RolloutView,
    "bertviz": BertvizView,
    "used": UsedView,
    "ablation": AblationView,
    "patching": PatchingView,
    "schedule": ScheduleView,
    "timeline": TimelineView,
    "live": LiveView,
    "positional": PositionalView,
    "compare": CompareView,
    "card": CardView,
}
