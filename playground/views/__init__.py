"""The playground's page, one module per view: each builds its layout and owns its handlers.

Every view is a `common.View` built inside a gr.Blocks context, inside its own tab (`self.tab`). `fill(result,
values)` returns the {component: value} updates that show a translation (values maps every component in
`controls` to what the page holds); `on_pair(translator, pair, values)` those for a newly chosen checkpoint
(reading `pair_inputs`, setting `pair_outputs`); `wire(result)` attaches the view's own events. The page calls
them when the view's tab is seen, once per translation and per pair, through `View.guarded`: a view that fails
says so in its own notice and the others go on. Handlers return dicts, never positional tuples, and can be
called directly in tests.
"""
