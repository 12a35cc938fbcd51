"""Indexing: canonical text in, what the store keeps for search out.

Receives a document's canonical text with its pages and headings; returns passages with exact
offsets (`split`), their keyword terms (`tokenize`, `analyze`), what the embedding model is given
for each (`context`, which also defines the `NewPassage` record), their vectors (`embed`,
`embed_onnx`, `onnx_export`, `embed_server`, chosen by `embedders`) and search codes (`codes`).

May import: read.
"""
