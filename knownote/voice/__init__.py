"""Voices: text in one language → speech, on this machine, from voices inside registry packages.

Receives a line of text and a `Voice`; returns mono float32 samples at `SAMPLE_RATE`, and encodes
them (Ogg/Opus, MP3, WAV) with PyAV. Imports only `knownote.index.language`, to tell which
language a line is in.
"""
