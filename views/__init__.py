"""The playground's page, one module per view: each builds its layout and owns its handlers.

A view is a class built inside a gr.Blocks context. `fill(result, values)` returns the {component: value}
updates that show a new translation (values maps every component in `controls` to what the page holds),
`on_pair(translator)` those for a newly chosen checkpoint, and `wire(result)` attaches the view's own events.
Handlers return dicts, never positional tuples, and can be called directly in tests.
"""
