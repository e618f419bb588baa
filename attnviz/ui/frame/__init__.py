"""What every page is drawn in: the navigation between pages, the back end's arrival (loading),
the presenter view, messages, typed session state, server options, and the charts with their
"Download this view"."""
