"""The page script `app.py` serves (Streamlit runs it once per session and per rerun)."""

from attnviz.ui.app.shell import main

main()
