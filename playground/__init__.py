"""The page's own package: results and caches, downloads, figures (plotly), the bertviz document, the Space upload and the views (gradio)."""
