"""Reading files: bytes in, the canonical text out (`extracted.Extracted`).

Receives a file's bytes and its name; returns the canonical text every offset indexes, with the
character range of each page, the headings, and for pages read by OCR a box per character.
Sniffing (`sniff`, `zipcheck`), one reader per format (`pdf`, `office`, `epub`, `html`,
`markdown`; `web` for a fetched page's main content, `audio` for recordings transcribed with a
time per word), fetching a web address with its every hop checked (`fetch`), the cleaning rules
(`canonical`), headings (`sections`, `pdf_headings`), OCR (`scans`, `ocr`, `tesseract`), and
extraction in a child process under a time limit (`timelimit`, calling `extract`).

Imports no other stage: this is the bottom of the pipeline.
"""
