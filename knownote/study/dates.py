"""Dates written in a text, as ranges of it with an ISO 8601 value: the timeline's reader.

Full dates ("March 3, 2021", "3 March 2021", "3. März 2021", "3 марта 2021", "2021年3月3日",
"2021-03-03"), months ("March 2021"), years ("in 1998", "1998年", "в 1998 году"), ranges
("1914–1918", "from 1914 to 1918"), decades ("the 1990s", "1990er Jahre", "1990年代") and
centuries ("the 19th century", "19. Jahrhundert", "19世纪", "XIXe siècle", "XIX век").

A bare four-digit number is a year only where the words around it say so ("in 1998",
"(1998)", "the 1998 election"): most bare numbers of a book are counts, page numbers, sums.
Measured against dateparser's `search_dates` on the corpus (benchmarks/timeline.py), which
calls many such numbers and words ("now", "second") dates and takes ~100 times as long.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence
from dataclasses import dataclass

LAST_YEAR = 2100
MAX_SENTENCE = 1000  # characters: a longer "sentence" is a list or a table, not one dated claim


@dataclass(frozen=True)
class FoundDate:
    """`text[start:end]` is the date as written; `date` its ISO 8601 value ('2021', '2021-03',
    '2021-03-03', or a range '1990/1999')."""

    start: int
    end: int
    date: str
    first: tuple[int, int, int]  # (year, month, day) of its beginning, 0 where not said
    last: tuple[int, int, int]  # of its end


_MONTH_NAMES = {
    1: "january jan januar jänner janvier enero gennaio janeiro januari января январь январе",
    2: "february feb februar février fevrier febrero febbraio fevereiro februari февраля "
    "февраль феврале",
    3: "march mar märz maerz mars marzo março maart марта март марте",
    4: "april apr avril abril aprile апреля апрель апреле",
    5: "may mai mayo maggio maio mei мая май мае",
    6: "june jun juni juin junio giugno junho июня июнь июне",
    7: "july jul juli juillet julio luglio julho июля июль июле",
    8: "august aug août aout agosto augustus августа август августе",
    9: "september sep sept septembre septiembre setiembre settembre setembro сентября "
    "сентябрь сентябре",
    10: "october oct oktober octobre octubre ottobre outubro октября октябрь октябре",
    11: "november nov novembre noviembre novembro ноября ноябрь ноябре",
    12: "december dec dezember décembre decembre diciembre dicembre dezembro декабря декабрь "
    "декабре",
}
MONTHS = {name: number for number, names in _MONTH_NAMES.items() for name in names.split()}
_MONTH = "(?P<month>" + "|".join(sorted(map(re.escape, MONTHS), key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)"
_YEAR = r"(?P<year>[12]\d{3})"
# No word (of an alphabet: CJK writes words right beside numbers), number or date goes on
# before, nor after: "1998" but not "1998,5", "1998 000", "1998th", "A1998".
_ALPHA = "0-9A-Za-z\u00c0-\u024f\u0370-\u04ff_"
_B = rf"(?<![{_ALPHA}.,/-])"
_E = rf"(?![{_ALPHA}]|[.,]\d|\s?\d)"

_ORDINALS_EN = tuple(
    [
        "first",
        "second",
        "third",
        "fourth",
        "fifth",
        "sixth",
        "seventh",
        "eighth",
        "ninth",
        "tenth",
        "eleventh",
        "twelfth",
        "thirteenth",
        "fourteenth",
        "fifteenth",
        "sixteenth",
        "seventeenth",
        "eighteenth",
        "nineteenth",
        "twentieth",
        "twenty-first",
    ]
)
_ROMAN = {"I": 1, "V": 5, "X": 10, "L": 50}
_CHINESE = {c: i for i, c in enumerate("〇一二三四五六七八九十", start=0)}

# Words before a bare year that make it one: "in 1998", "seit 1998", "depuis 1998", "в 1998".
_CUES = (
    r"in|since|by|from|until|till|through|during|before|after|around|circa|c\.|ca\.|early|late|"
    r"mid|mid-|year|summer|spring|autumn|fall|winter|of|im|seit|bis|ab|vor|nach|um|anno|jahr|"
    r"jahre|en|depuis|dès|vers|avant|après|desde|hasta|antes|después|nel|dal|fino|dopo|prima|em|"
    r"até|após|в|с|до|после|около|к"
)
# Words after a number that make it a count or a measure, never a year.
_COUNTED = (
    r"%|percent|per|people|persons|men|women|children|copies|times|years?|year-old|days?|hours?|"
    r"minutes?|seconds?|km|kilomet(?:re|er)s?|miles?|met(?:re|er)s?|feet|ft|m|cm|mm|kg|g|lb|"
    r"pounds?|tons?|tonnes?|pages?|words?|dollars?|euros?|cases?|members?|students?|species|"
    r"units?|items?|songs?|films?|books?|records?|votes?|employees|workers|soldiers|troops|"
    r"lines?|characters?|bytes?|bits?|calories|degrees|°|mal|menschen|personen|jahre|leute|"
    r"personnes|gens|fois|personas|veces|человек|раз|лет"
)
# Words before a number that make it no year: "p. 1998", "$1998", "No. 1998".
_NOT_AFTER = re.compile(
    r"(?:[$€£¥#№§]|\b(?:p|pp|s|no|nr|vol|isbn|page|pages|seite|seiten|number|figure|fig|"
    r"table|tab|total|population|sum|about|some|over|nearly|almost|approximately|than|"
    r"[Cc]hapter|ch|art|article|section|sec|line|route|flight|model|room|"
    r"nos?|rs|inr|usd|eur)\.?)\s*$",
    re.IGNORECASE,
)

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "cjk_full",
        re.compile(
            r"(?P<bc>公元前|紀元前|纪元前)?(?P<year>\d{1,4})\s*年\s*(?P<month>\d{1,2})\s*月"
            r"(?:\s*(?P<day>\d{1,2})\s*[日号號])?"
        ),
    ),
    ("iso", re.compile(rf"{_B}(?P<year>[12]\d{{3}})-(?P<month>[01]\d)-(?P<day>[0-3]\d)(?!\d)")),
    (
        "day_month_year",
        re.compile(
            rf"{_B}{_DAY}(?:\.|st|nd|rd|th|er|º|°)?\s+(?:de\s+)?{_MONTH}(?:\s+de|,)?\s+"
            rf"{_YEAR}{_E}",
            re.IGNORECASE,
        ),
    ),
    (
        "month_day_year",
        re.compile(rf"(?<!\w){_MONTH}\s+{_DAY}(?:st|nd|rd|th)?,?\s+{_YEAR}{_E}", re.IGNORECASE),
    ),
    (
        "month_year",
        re.compile(rf"(?<!\w){_MONTH}\s+(?:de\s+|of\s+)?{_YEAR}{_E}", re.IGNORECASE),
    ),
    (
        "year_range",
        re.compile(
            rf"(?:\b(?P<cue>from|between|von|zwischen|de|du|entre|dal|с|从|從|自)\s*)?{_B}"
            rf"(?P<year>[12]\d{{3}})(?:\s*年?\s*(?:[–—−-]|至|到|～|~|－)\s*(?P<to>[12]\d{{3}}|\d{{2}})"
            rf"|\s+(?P<word>to|until|till|and|bis|und|à|au|a|al|y|et|по|до)\s+"
            rf"(?P<to2>[12]\d{{3}})){_E}"
        ),
    ),
    (
        "century",
        re.compile(
            r"(?P<bc>公元前|紀元前|纪元前)?(?P<cjk>[0-9一二三四五六七八九十]{1,3})\s*世[纪紀]"
            rf"|(?<!\w)(?P<n>[12]?\d)(?:st|nd|rd|th)[\s-]+century(?!\w)"
            rf"|(?<!\w)(?P<word>{'|'.join(_ORDINALS_EN)})[\s-]+century(?!\w)"
            r"|(?<![\w.])(?P<de>[12]?\d)\.\s*(?:Jahrhundert|Jh\.)"
            r"|(?<!\w)(?P<fr>[12]?\d)(?:e|ème|er)\s+siècle"
            r"|(?<!\w)(?P<roman>[IVXL]{1,5})(?:e|ème|er)?\s+(?:siècle|century|век|века|веке|"
            r"secolo|século)(?!\w)"
            r"|(?<!\w)siglo\s+(?P<siglo>[IVXL]{1,5})(?!\w)",
            re.IGNORECASE,
        ),
    ),
    (
        "decade",
        re.compile(
            rf"(?<![{_ALPHA}.,/])(?P<year>[12]\d{{2}}0)(?:s\b|’s\b|'s\b|er(?:\s*Jahren?)?\b|\s*年代)"
        ),
    ),
    (
        "cjk_year",
        re.compile(
            r"(?P<bc>公元前|紀元前|纪元前)?(?P<cue>公元|西元|于|於|在|至|到|从|從)?"
            r"(?<!\d)(?P<year>\d{3,4})\s*年(?!代|多|余|餘|来|來|間|间|左右|以上)"
        ),
    ),
    (
        "year_word",  # "in the year 1998", "im Jahr 1998", "в 1998 году", "1998 год"
        re.compile(
            rf"(?:\b(?:the\s+)?year\s+|\bim\s+Jahre?\s+|\bJahr\s+|\ben\s+l'an\s+|\ben\s+el\s+año\s+)"
            rf"{_YEAR}{_E}|{_B}(?P<year2>[12]\d{{3}})\s+(?:году|года|год|г\.)",
            re.IGNORECASE,
        ),
    ),
    (
        "cued_year",
        re.compile(
            rf"(?<!\w)(?P<cue>{_CUES})(?:\s+|(?<=-))(?:the\s+)?{_B}{_YEAR}{_E}", re.IGNORECASE
        ),
    ),
    ("paren_year", re.compile(r"\((?P<year>[12]\d{3})\)")),
    (
        "the_year",  # "the 1998 election", "a 2004 study", "his 1971 book"
        re.compile(
            r"(?<!\w)(?:the|a|an|its|his|her|their|this|that)\s+(?P<year>1[6-9]\d{2}|20[0-4]\d)"
            r"\s+(?P<next>[A-Za-z][\w-]*)",
            re.IGNORECASE,
        ),
    ),
]
_COUNTED_WORD = re.compile(rf"(?:{_COUNTED})\b", re.IGNORECASE)
_COUNTED_AFTER = re.compile(rf"\s*(?:{_COUNTED})(?!\w)", re.IGNORECASE)


def dates_in(text: str, start: int = 0, end: int | None = None) -> list[FoundDate]:
    """The dates written in `text[start:end]`, in text order, none overlapping another (the
    longest reading of a place wins: "March 3, 2021" over "2021")."""
    end = len(text) if end is None else end
    found: list[FoundDate] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text, start, end):
            date = _read(kind, m, text)
            if date is not None:
                found.append(date)
    found.sort(key=lambda d: (d.start, -(d.end - d.start)))
    kept: list[FoundDate] = []
    for date in found:
        if kept and date.start < kept[-1].end:
            continue
        kept.append(date)
    return kept


def sentence_date(
    text: str, start: int, end: int, skipped: Sequence[tuple[int, int]] = ()
) -> FoundDate | None:
    """The first date of the sentence `text[start:end]` outside its `skipped` ranges (a page
    header inside it); None for a sentence of no date, or of figures rather than words (a
    table's row where every number looks like a year)."""
    sentence = text[start:end]
    if end - start > MAX_SENTENCE or not _wordy(sentence) or CITATION.search(sentence):
        return None
    found = [
        d
        for d in dates_in(text, start, end)
        if not any(a < d.end and d.start < b for a, b in skipped)
    ]
    return found[0] if found else None


# What a reference entry or a note citing a work says (and a dated claim of the text does not):
# "Retrieved 22 June 2020", "Archived from the original", "Law Review 48 (1996): 1293",
# "(New York: Amacom, 2002)", "no. 2", "pp. 12", "et al.", a web address.
CITATION = re.compile(
    r"\b(?:Retrieved|Archived|Accessed|accessed|Abgerufen|archiviert|consulté)\b"
    r"|\bfrom the original\b|https?://|\bavailable at\b|\b(?:ISBN|ISSN|doi)\b"
    r"|\bpp?\.\s*\d|\bet al\.|\bibid\b|\bop\. cit\b|\b(?:vol|no|nos)\.\s*\d"
    r"|\(\d{4}\)\s*[:,]\s*\d|\([A-Z][\w .]{1,30}:\s*[^():]{2,60},\s*\d{4}\)"
    r"|^\d{1,3}\.\s+[\"“]"
)
_LETTERS = re.compile(r"[^\W\d_]")
_WORDS = re.compile(r"[^\W\d_]{2,}")
_NUMBERS = re.compile(r"\d+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")


def _wordy(sentence: str) -> bool:
    """Whether a sentence is mostly words: not a row of figures or years."""
    solid = len(re.sub(r"\s", "", sentence))
    letters = len(_LETTERS.findall(sentence))
    if not solid or letters < 0.5 * solid:
        return False
    if _CJK.search(sentence):
        return len(_CJK.findall(sentence)) >= 6
    words = len(_WORDS.findall(sentence))
    return words >= 4 and len(_NUMBERS.findall(sentence)) <= words


def _read(kind: str, m: re.Match[str], text: str) -> FoundDate | None:
    if kind == "century":
        return _century(m)
    groups = m.groupdict()
    name = "year" if groups.get("year") else "year2"
    year = int(groups[name])
    if groups.get("bc"):
        year = 1 - year
    at, to = m.start(name), m.end()
    if groups.get("bc"):
        at = m.start("bc")
    if kind in ("cjk_full", "iso", "day_month_year", "month_day_year", "month_year"):
        return _full(kind, m, year)
    if kind == "year_range":
        return _range(m, text, year)
    if kind == "decade":
        # "the 1800s" is a century; "the 2000s" (like "the 1990s") a decade
        width = 100 if year % 100 == 0 and year != 2000 and text[m.end(name)] == "s" else 10
        if not 1000 <= year <= LAST_YEAR:
            return None
        span = (year, 0, 0), (year + width - 1, 0, 0)
        return FoundDate(m.start(), to, f"{year}/{year + width - 1}", *span)
    if kind == "cjk_year":
        if len(groups["year"]) == 3 and not (groups.get("cue") or groups.get("bc")):
            return None  # "500年" is more often a span of years than the year 500
        if not groups.get("bc") and not 100 <= year <= LAST_YEAR:
            return None
    elif not 1000 <= year <= LAST_YEAR or not _said_as_year(kind, m, text, name):
        return None
    if kind in ("the_year", "paren_year"):
        to = m.end(name)
    elif kind == "cued_year" and groups["cue"].lower().startswith(("early", "late", "mid")):
        at = m.start()
    return FoundDate(at, to, _year(year), (year, 0, 0), (year, 0, 0))


def _full(kind: str, m: re.Match[str], year: int) -> FoundDate | None:
    """A full date or a month of a year."""
    month, day = m.group("month"), m.groupdict().get("day")
    number = int(month) if month.isdigit() else MONTHS[month.lower().rstrip(".")]
    day_number = int(day) if day else 0
    if not 1 <= number <= 12 or year > LAST_YEAR:
        return None
    if day_number and (year < 1 or not 1 <= day_number <= calendar.monthrange(year, number)[1]):
        return None
    if kind == "month_year" and month.lower().rstrip(".") in _WORDS_TOO and month.islower():
        return None  # "may", "mar" as words
    value = f"{_year(year)}-{number:02d}" + (f"-{day_number:02d}" if day_number else "")
    start = m.start("bc") if m.groupdict().get("bc") else m.start()
    return FoundDate(start, m.end(), value, (year, number, day_number), (year, number, day_number))


_WORDS_TOO = frozenset({"may", "mar", "jun", "jan", "dec", "sept", "sep"})
# "and" joins a range only after "between": "in 1998 and 2004" are two years
_ONLY_BETWEEN = frozenset({"and", "und", "et", "y"})


def _range(m: re.Match[str], text: str, year: int) -> FoundDate | None:
    last = m.group("to") or m.group("to2")
    cue, word = m.group("cue"), m.group("word")
    if word and word.lower() in _ONLY_BETWEEN and not (cue and cue.lower() in _BETWEEN):
        return None
    until = int(last) if len(last) == 4 else year // 100 * 100 + int(last)
    if not (1000 <= year < until <= LAST_YEAR and until - year <= 300):
        return None
    at = m.start()
    if _NOT_AFTER.search(text[max(0, at - 12) : at]) or text[max(0, at - 1) : at] == ":":
        return None  # "pp. 1200–1250", "12:1200-1250"
    if _COUNTED_AFTER.match(text, m.end()):
        return None
    return FoundDate(at, m.end(), f"{year}/{until}", (year, 0, 0), (until, 0, 0))


_BETWEEN = frozenset({"between", "zwischen", "entre"})
# Words before "of" that make the number after it a count: "a total of 1500", "out of 2000".
_COUNT_OF = re.compile(
    r"\b(?:total|population|number|sum|out|group|team|crowd|average|estimate|maximum|minimum|"
    r"series|sample|score|budget|cost|price|fee|fine|salary|rate|height|depth|length|distance|"
    r"altitude|elevation|area|capacity|audience|attendance|army|fleet|value|amount|circulation|"
    r"run|edition|loss|profit|debt|revenue|income|size|force|one|any|each|list)s?\s+of\s*$",
    re.IGNORECASE,
)


def _said_as_year(kind: str, m: re.Match[str], text: str, name: str) -> bool:
    """Whether the words around a bare four-digit number make it a year."""
    before = text[max(0, m.start() - 24) : m.start(name)]
    if _NOT_AFTER.search(before) or _COUNT_OF.search(before):
        return False
    if kind != "paren_year" and _COUNTED_AFTER.match(text, m.end(name)):
        return False
    return not (kind == "the_year" and _COUNTED_WORD.fullmatch(m.group("next")))


def _century(m: re.Match[str]) -> FoundDate | None:
    g = m.groupdict()
    if g["cjk"]:
        n = _chinese_number(g["cjk"])
    elif g["word"]:
        n = _ORDINALS_EN.index(g["word"].lower().replace(" ", "-")) + 1
    elif g["roman"] or g["siglo"]:
        n = _roman(g["roman"] or g["siglo"])
    else:
        n = int(g["n"] or g["de"] or g["fr"])
    if n is None or not 1 <= n <= 21:
        return None
    if g.get("bc"):
        first, last = 1 - n * 100, 1 - ((n - 1) * 100 + 1)
    else:
        first, last = (n - 1) * 100 + 1, n * 100
    return FoundDate(
        m.start(), m.end(), f"{_year(first)}/{_year(last)}", (first, 0, 0), (last, 0, 0)
    )


def _year(year: int) -> str:
    """ISO 8601: 1 BC is year 0000, 2 BC is -0001."""
    return f"{year:04d}" if year >= 0 else f"-{-year:04d}"


def _roman(numeral: str) -> int | None:
    values = [_ROMAN[c] for c in numeral.upper()]
    total = sum(
        -v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values)
    )
    return total if total > 0 else None


def _chinese_number(written: str) -> int | None:
    if written.isdigit():
        return int(written)
    digits = [_CHINESE[c] for c in written]
    if 10 not in digits:
        return digits[0] if len(digits) == 1 else None
    tens_at = digits.index(10)
    tens = digits[tens_at - 1] if tens_at else 1
    ones = digits[tens_at + 1] if tens_at + 1 < len(digits) else 0
    return tens * 10 + ones
