"""The Streamlit user interface: the only part of attnviz that imports streamlit."""
