"""attnviz: an interactive attention visualiser. Run with `streamlit run app.py`."""

from attnviz.ui.main import main

main()
