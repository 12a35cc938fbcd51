"""The player of an audio overview: the audio beside its transcript, the line being spoken marked,
a click on a line playing from its start, and the cards of the ranges that line cites.

One HTML document (the app shows it in a component's iframe, where its script runs): an `<audio>`
element, the lines as buttons (keyboard accessible) carrying their `start_s`/`end_s`, and the
answers' citation cards (knownote.show.excerpt), of which those the marked line cites are shown.
Every piece of document text is escaped; the cards come escaped from `card_html`.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Mapping

from knownote.answer.audio_overview import AudioLine, AudioOverview
from knownote.show.audio_transcript import speaker_name, stamp
from knownote.show.excerpt import STYLE as CARD_STYLE

HEIGHT = 560  # pixels of the component at most: the lines and the cards each scroll inside it
NO_CITES = "This line cites nothing: a title or a host's turn."
CITES_HINT = "The ranges the marked line leans on (not proof of it):"
_MARK = re.compile(r"\[(\d{1,4})\]")

_STYLE = """<style>
html,body{margin:0;font-family:"Source Sans Pro","Source Sans 3",sans-serif;color:#31333f}
.kn-player audio{width:100%;margin:0 0 .6rem 0}
.kn-columns{display:flex;gap:1.2rem;align-items:flex-start}
.kn-lines{flex:3;list-style:none;margin:0;padding:0 .3rem 0 0;max-height:calc(100vh - 80px);
  overflow-y:auto}
.kn-lines li{margin:0 0 .25rem 0}
.kn-line{display:block;width:100%;text-align:left;font:inherit;font-size:.92rem;line-height:1.5;
  background:none;border:1px solid transparent;border-radius:.4rem;padding:.3rem .5rem;
  cursor:pointer;color:inherit}
.kn-line:hover{background:rgba(49,51,63,.05)}
.kn-line:focus-visible{outline:2px solid #1d4ed8}
.kn-line.kn-now{background:#fdf3cf;border-color:#e3c766}
.kn-time{font-variant-numeric:tabular-nums;color:rgba(49,51,63,.6);margin-right:.4em}
.kn-speaker{font-weight:600;margin-right:.3em}
.kn-mark{font-weight:600;font-size:.85em;color:#1d4ed8}
.kn-side{flex:2;max-height:calc(100vh - 80px);overflow-y:auto}
.kn-hint{font-size:.8rem;color:rgba(49,51,63,.7);margin:0 0 .4rem 0}
</style>"""

_SCRIPT = """<script>
(() => {
  const audio = document.getElementById("kn-audio");
  const lines = Array.from(document.querySelectorAll(".kn-line"));
  const cards = Array.from(document.querySelectorAll(".kn-side .kn-card"));
  const none = document.getElementById("kn-none");
  const hint = document.getElementById("kn-hint");
  const list = document.querySelector(".kn-lines");
  let current = null;
  function mark(i) {
    if (i === current) return;
    current = i;
    lines.forEach((b, j) => {
      b.classList.toggle("kn-now", j === i);
      if (j === i) b.setAttribute("aria-current", "true"); else b.removeAttribute("aria-current");
    });
    const cites = i < 0 ? [] : lines[i].dataset.cites.split(" ").filter(Boolean);
    cards.forEach((c) => { c.hidden = !cites.includes(c.dataset.n); });
    none.hidden = i < 0 || cites.length > 0;
    hint.hidden = cites.length === 0;
    if (i >= 0) {
      const b = lines[i], top = b.offsetTop - list.offsetTop;
      if (top < list.scrollTop || top + b.offsetHeight > list.scrollTop + list.clientHeight)
        list.scrollTop = top - list.clientHeight / 3;
    }
  }
  function lineAt(t) {
    let found = -1;
    lines.forEach((b, j) => {
      if (parseFloat(b.dataset.start) <= t + 0.001) found = j;
    });
    return found;
  }
  const follow = () => mark(lineAt(audio.currentTime));
  audio.addEventListener("timeupdate", follow);
  audio.addEventListener("seeked", follow);
  lines.forEach((b, j) => b.addEventListener("click", () => {
    const s = parseFloat(b.dataset.start);
    if (!Number.isNaN(s)) {
      audio.currentTime = s;
      audio.play().catch(() => {});
    }
    mark(j);
  }));
  mark(lines.length ? Math.max(lineAt(0), 0) : -1);
})();
</script>"""


def player_height(overview: AudioOverview) -> int:
    """The component's height: room for the audio, the lines and a card, up to HEIGHT."""
    return min(HEIGHT, max(300, 90 + 36 * len(overview.lines)))


def audio_source(data: bytes, mime: str = "audio/ogg") -> str:
    """A data: URL of the audio, so the player needs no file served beside it."""
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def line_html(line: AudioLine, index: int, known: set[int]) -> str:
    """One line as a button: its time, speaker and text, each `[n]` of a known citation marked."""
    text = _MARK.sub(
        lambda m: (
            f'<span class="kn-mark">{m.group(0)}</span>' if int(m.group(1)) in known else m.group(0)
        ),
        html.escape(line.text),
    )
    cites = " ".join(str(n) for n in line.cites if n in known)
    times = ""
    if line.start_s is not None:
        times += f' data-start="{line.start_s:.3f}"'
    if line.end_s is not None:
        times += f' data-end="{line.end_s:.3f}"'
    return (
        f'<li><button type="button" class="kn-line" data-i="{index}" data-cites="{cites}"{times}>'
        f'<span class="kn-time">{stamp(line.start_s)}</span>'
        f'<span class="kn-speaker">{html.escape(speaker_name(line))}:</span>'
        f'<span class="kn-text">{text}</span></button></li>'
    )


def player_html(overview: AudioOverview, source: str, cards: Mapping[int, str]) -> str:
    """The player: the audio at `source` (a URL, e.g. `audio_source(bytes)`), the lines, and the
    card of each citation by its number (HTML from `knownote.show.excerpt.card_html`, escaped
    there). The lines' cards are shown as the line is marked."""
    known = {c.n for c in overview.cites}
    lines = "".join(line_html(line, i, known) for i, line in enumerate(overview.lines))
    side = "".join(
        card.replace('<div class="kn-card"', '<div hidden class="kn-card"', 1)
        for _, card in sorted(cards.items())
    )
    return (
        CARD_STYLE
        + _STYLE
        + '<div class="kn-player">'
        + f'<audio id="kn-audio" controls preload="auto" src="{html.escape(source)}"></audio>'
        + '<div class="kn-columns">'
        + f'<ol class="kn-lines" aria-label="Transcript">{lines}</ol>'
        + '<div class="kn-side" aria-live="polite">'
        + f'<p class="kn-hint" id="kn-hint">{html.escape(CITES_HINT)}</p>'
        + f'<p class="kn-hint" id="kn-none" hidden>{html.escape(NO_CITES)}</p>'
        + side
        + "</div></div></div>"
        + _SCRIPT
    )
