"""The player's HTML: the audio, each line a button carrying its times and the numbers it cites,
the citation cards with the support span highlighted, every piece of document text escaped.
(The script's marking and seeking are tested in a browser: tests/browser/test_browser_audio.py.)"""

from __future__ import annotations

import base64
import re
from dataclasses import replace

from knownote.show.audio_player import audio_source, player_html
from knownote.show.excerpt import card_html
from tests.show.handmade_audio import ENGLISH, JAPANESE, overview, timed


def cards_of(spoken) -> dict[int, str]:
    texts = {1: ENGLISH, 2: JAPANESE}
    return {
        c.n: card_html(
            message_id=spoken.id, n=c.n, title=c.title, document_id=c.document_id,
            start=c.start, end=c.end, page_start=c.page, page_end=c.page, passage_text=c.quote,
            document_text=texts[c.document_id], spans=[(*c.span, f"s{c.n}")] if c.span else [],
        )
        for c in spoken.cites
    }  # fmt: skip


def test_each_line_is_a_button_with_its_times_and_cites_in_english_and_japanese():
    spoken, audio = timed(overview())
    page = player_html(spoken, audio_source(audio), cards_of(spoken))
    buttons = re.findall(r'<button type="button" class="kn-line"[^>]*>', page)
    assert len(buttons) == 4
    assert 'data-cites=""' in buttons[0] and 'data-start="0.000"' in buttons[0]
    assert f'data-start="{spoken.lines[2].start_s:.3f}"' in buttons[2]
    assert 'data-cites="2"' in buttons[2] and 'data-cites="3 1"' in buttons[3]
    assert '重力の丘は目の錯覚です <span class="kn-mark">[2]</span>。' in page
    assert "Host 2:" in page and "00:02" in page


def test_the_audio_is_the_ogg_opus_bytes_inline():
    spoken, audio = timed(overview())
    page = player_html(spoken, audio_source(audio), {})
    source = re.search(r'<audio id="kn-audio"[^>]* src="data:audio/ogg;base64,([^"]+)"', page)
    assert base64.b64decode(source.group(1)) == audio
    assert audio[:4] == b"OggS" and b"OpusHead" in audio[:100]


def test_every_card_is_there_hidden_until_its_line_is_marked_with_the_span_highlighted():
    spoken, _ = timed(overview())
    page = player_html(spoken, "x.ogg", cards_of(spoken))
    cards = re.findall(r'<div hidden class="kn-card"[^>]*data-n="(\d)"', page)
    assert cards == ["1", "2", "3"]
    assert '<mark class="kn-span" id="s2" data-start="0" data-end="4">重力の丘</mark>' in page


def test_document_text_in_a_line_or_title_is_escaped():
    base = overview()
    hostile = replace(base.lines[1], text="<img src=x onerror=alert(1)> [1] </button><script>")
    page = player_html(replace(base, lines=(hostile,)), 'x.ogg" onload="alert(2)', cards_of(base))
    assert "<img src=x" not in page and "</button><script>" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert 'onload="alert(2)' not in page
    assert "Gravity &lt;hill&gt; &amp; *roads*" in page  # the card's title
    assert page.count("<script>") == 1  # the player's own
