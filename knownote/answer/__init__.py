"""Answering: hits in, an answer whose citations and support spans are offsets out.

Answer servers (`ollama_chat`, `openai_chat`, behind `servers`), what they are sent (`prompts`),
the answer without a model (`quotes`), citation marks and the citation records (`cite`), support
spans (`support`), asking end to end (`ask`), answers and notes as they are saved (`chats`,
`notes`), and each source's overview (`overview`).

May import: read, index, store, search.
"""
