"""Files built to hang or blow up an importer. Shared by tests/read/test_timelimit.py and
benchmarks/hostile.py."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path


def _pdf(objects: list[bytes]) -> bytes:
    """A PDF of the given objects (1 is the catalog), with a correct xref table."""
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n"
              % (len(objects) + 1, xref))  # fmt: skip
    return out.getvalue()


def _stream(content: bytes, extra: bytes = b"") -> bytes:
    return b"<< /Length %d %s >>\nstream\n" % (len(content), extra) + content + b"\nendstream"


def nested_forms_pdf(depth: int = 9, fanout: int = 10) -> bytes:
    """One page whose drawing calls a form that calls the next one `fanout` times, `depth` deep:
    fanout**depth text draws from a file of a few kilobytes (billion laughs, for PDF)."""
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    # objects: 1 catalog, 2 pages, 3 page, 4 font, 5 page content, 6.. forms
    first_form = 6
    forms = []
    for level in range(depth):
        number = first_form + level
        if level == depth - 1:
            content = b"BT /F1 8 Tf 10 10 Td (laugh) Tj ET"
            resources = b"/Resources << /Font << /F1 4 0 R >> >>"
        else:
            content = b" ".join([b"/X Do"] * fanout)
            resources = b"/Resources << /XObject << /X %d 0 R >> >>" % (number + 1)
        forms.append(_stream(content, b"/Type /XObject /Subtype /Form /BBox [0 0 600 800] "
                             + resources))  # fmt: skip
    page_content = b"BT /F1 12 Tf 72 720 Td (A page that never finishes drawing.) Tj ET /X Do"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 600 800] /Contents 5 0 R "
        b"/Resources << /Font << /F1 4 0 R >> /XObject << /X %d 0 R >> >> >>" % first_form,
        font,
        _stream(page_content),
        *forms,
    ]
    return _pdf(objects)


def _docx(document_xml: bytes) -> bytes:
    sink = io.BytesIO()
    with zipfile.ZipFile(sink, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(
            "[Content_Types].xml",
            '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/'
            '2006/content-types"><Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/word/document.xml" ContentType="application/vnd.'
            'openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
        )
        zf.writestr(
            "_rels/.rels",
            '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/'
            'package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.'
            'openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
            'Target="word/document.xml"/></Relationships>',
        )
        zf.writestr("word/document.xml", document_xml)
    return sink.getvalue()  # fmt: skip


W = b'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def billion_laughs_docx() -> bytes:
    entities = [b'<!ENTITY l0 "laugh">']
    for i in range(1, 10):
        entities.append(b'<!ENTITY l%d "%s">' % (i, b"&l%d;" % (i - 1) * 10))
    doctype = b"<!DOCTYPE w:document [" + b"".join(entities) + b"]>"
    body = b"<w:document %s><w:body><w:p><w:r><w:t>&l9;</w:t></w:r></w:p></w:body></w:document>"
    return _docx(b'<?xml version="1.0"?>' + doctype + body % W)


def deep_xml_docx(depth: int = 200_000) -> bytes:
    inner = b"<w:p><w:r><w:t>deep</w:t></w:r></w:p>"
    nested = b"<w:sdt><w:sdtContent>" * depth + inner + b"</w:sdtContent></w:sdt>" * depth
    return _docx(b"<w:document %s><w:body>%s</w:body></w:document>" % (W, nested))


def regex_hostile_txt() -> bytes:
    """Long runs without a break: no paragraph, line, sentence or word boundary to split at,
    then alternating near-boundaries."""
    return (b"a" * 3_000_000 + b"\n" + b". " * 500_000 + b"\n" + b"\t \t" * 300_000
            + b"x" + b" ." * 500_000)  # fmt: skip


def markup_hostile_html() -> bytes:
    return b"<html><body>" + b"<div>" * 100_000 + b"text" + b"</div>" * 100_000 + b"</body></html>"


HOSTILE_FILES = {
    "PDF: forms nested 10^9 draws deep": ("laughs.pdf", nested_forms_pdf),
    "DOCX: billion-laughs entities": ("laughs.docx", billion_laughs_docx),
    "DOCX: XML nested 200,000 deep": ("deep.docx", deep_xml_docx),
    "TXT: 3 MB without a boundary, then near-boundaries": ("runs.txt", regex_hostile_txt),
    "HTML: 100,000 nested divs": ("deep.html", markup_hostile_html),
}


def write_all(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for title, (name, make) in HOSTILE_FILES.items():
        out[title] = folder / name
        out[title].write_bytes(make())
    return out
