"""Hooks on the model's modules and what is read through them."""
