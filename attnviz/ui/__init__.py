"""The Streamlit user interface: the only part of attnviz that imports streamlit.

On top, the app (`app`: the server, the st.App, with its warm-up; the page script; the shell
around every page). Below it: the pages (`pages`, one file per URL), the views one page uses
(`language_model`), what the model pages share (`models`), the explorer (`explorer`), the
controls (`controls`) and the frame every page is drawn in (`frame`).
"""
