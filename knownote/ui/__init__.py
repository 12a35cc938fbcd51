"""The Streamlit views: layout and widgets only. Only this package and app.py import streamlit."""
