"""Every figure of the page, one module per view (`<view>.py`), beside the attention maps (`maps`), the
attributions and the glance; `base` holds what they share. Plotly only (the glance: SVG): never imports gradio."""
