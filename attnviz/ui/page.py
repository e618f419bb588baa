"""The page script `app.py` serves (Streamlit runs it once per session and rerun)."""

from attnviz.ui.main import main

main()
