"""The app: the server (the st.App) and its warm-up, the page script Streamlit runs, and the shell
around every page. The page script sits here, away from `attnviz/ui/pages/`: Streamlit would
serve the files of a `pages/` folder beside it as pages of their own."""
