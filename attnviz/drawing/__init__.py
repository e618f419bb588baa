"""Drawing: plotly figures of the stages, pooled overviews, the line view, downloads.

Plain Python and plotly: nothing here imports TensorFlow or Streamlit, so figures can be drawn in
a notebook from any arrays.
"""
