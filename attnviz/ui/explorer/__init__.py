"""The Matrices explorer: its results with their tabs, and its own state (what it shows, and
`open_in_explorer` for the pages that open a trained attention in it)."""
