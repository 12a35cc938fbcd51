"""The Streamlit views: layout and widgets only. Only this package and app.py import streamlit.

Each user action calls one function of the stages below; errors they raise are shown here.
`upload_budget` (who may hold uploads in memory) is plain Python beside the views.

May import every stage; nothing in the package imports ui.
"""
