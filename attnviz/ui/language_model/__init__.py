"""The Language model page's views (its tabs)."""
