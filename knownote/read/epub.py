"""EPUB books: the chapters of the spine, one page each."""

from __future__ import annotations

import posixpath
import zipfile
from urllib.parse import unquote

from lxml import etree

from knownote.errors import FileTooLarge
from knownote.read.canonical import clean_text, good_title, join_pages, locate_headings
from knownote.read.extracted import Extracted
from knownote.read.html import XML_PARSER, read_html
from knownote.read.office import damaged
from knownote.read.roles import carry_over, reader_roles
from knownote.read.sniff import ZIP_ERRORS, declared_charset, decode


def _epub_opf_path(zf: zipfile.ZipFile) -> str | None:
    if "META-INF/container.xml" not in zf.namelist():
        return next((n for n in zf.namelist() if n.endswith(".opf")), None)
    container = etree.fromstring(zf.read("META-INF/container.xml"), XML_PARSER)
    rootfile = container.find(".//{*}rootfile")
    return rootfile.get("full-path") if rootfile is not None else None


def extract_epub(zf: zipfile.ZipFile, name: str, max_pages: int) -> Extracted:
    try:
        opf_path = _epub_opf_path(zf)
        opf = etree.fromstring(zf.read(opf_path), XML_PARSER) if opf_path else None
    except (*ZIP_ERRORS, KeyError, etree.XMLSyntaxError):
        opf = None
    if opf is None:
        raise damaged(name, "table of contents (OPF)")
    base = posixpath.dirname(opf_path)
    manifest = {item.get("id"): item for item in opf.iter("{*}item")}
    spine = [
        manifest[ref.get("idref")] for ref in opf.iter("{*}itemref") if ref.get("idref") in manifest
    ]
    if len(spine) > max_pages:
        raise FileTooLarge(
            f"{name} has {len(spine)} chapters, more than the limit of "
            f"{max_pages}. Split it into smaller files."
        )
    texts, found, raws, missing = [], [], [], 0
    for item in spine:
        href = unquote((item.get("href") or "").split("#")[0])
        if "html" not in (item.get("media-type") or "") and not href.endswith(("htm", "html")):
            continue
        try:
            raw = zf.read(posixpath.normpath(posixpath.join(base, href)))
        except (*ZIP_ERRORS, KeyError):
            missing += 1
            continue
        markup = decode(raw, name, declared_charset(raw)).text
        read = read_html(markup, xml_first=True)
        if text := clean_text(read.text):
            texts.append(text)
            found.append(read.headings)
            raws.append(read)
    warnings = (f"{missing} chapters are missing from {name} and were skipped.",) if missing else ()
    title_el = opf.find(".//{*}metadata/{*}title")
    title = good_title("".join(title_el.itertext()) if title_el is not None else None)
    text, pages = join_pages(texts)
    headings = [
        heading
        for page, words in zip(pages, found, strict=True)
        for heading in locate_headings(text, words, page.start, page.end)
    ]
    roles = [  # each chapter's elements, carried over to its page
        role
        for page, chapter, read in zip(pages, texts, raws, strict=True)
        for role in carry_over(read.text, chapter, read.roles, page.start)
    ]
    return Extracted(
        text,
        "epub",
        pages,
        title,
        warnings,
        headings=tuple(headings),
        roles=reader_roles(text, headings, roles),
    )
