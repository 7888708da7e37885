"""What a report page is made of (sections, tables, figures), how its pieces become inline data,
and how the page is rendered from the jinja2 templates shipped in `templates/` and written whole.

Everything a page shows travels inside it (images as `data:` URIs, CSS and JavaScript inline),
and its Content-Security-Policy lets the browser fetch nothing else, so the file can be mailed,
archived and opened offline without leaking a request.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from searcher.outputs import write_text

__all__ = ["CSP", "Cell", "Examples", "Figure", "Page", "Section", "Table", "data_uri", "png_figure", "render", "table", "write"]

#: images may only be data: URIs, styles and scripts only inline; nothing is fetched, posted or framed.
CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
       "base-uri 'none'; form-action 'none'")


@dataclass
class Figure:
    """A plot or contact sheet as a data URI, with what it shows."""

    uri: str
    caption: str


@dataclass
class Examples:
    """A table cell of thumbnails (data URIs) and, when they share a failure mode, a link that filters the gallery to it."""

    images: list[str]
    mode: int | None = None


@dataclass
class Cell:
    """A table cell of text with a class, so the page's style and its readers can tell it apart
    (a failure mode's caption, the control of a confirmation)."""

    text: str
    kind: str


@dataclass
class Table:
    """A table ready to print: column names and rows of strings (or `Examples`, `Cell`), and a note under it."""

    caption: str
    columns: list[str]
    rows: list[list[Any]]
    note: str = ""


@dataclass
class Section:
    """One part of the page, linked from its table of contents: words, lines quoted as written
    (an analysis's own summary), tables, figures, a gallery, and subsections shown folded."""

    id: str
    title: str
    paragraphs: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    gallery: Any = None  # a `searcher.report.gallery.Gallery`
    children: list[Section] = field(default_factory=list)


@dataclass
class Page:
    """A whole report: what it is of, the summary in words, the configuration, the sections."""

    title: str
    kind: str
    source: str
    summary: str
    config: list[tuple[str, str]]
    sections: list[Section]
    built: str


def data_uri(data: bytes, mime: str) -> str:
    """`data:` URI of `data` (base64)."""
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def png_figure(path: str | Path, caption: str) -> Figure:
    """A PNG file (a plot a library call wrote, a transect sheet) as an inline figure."""
    return Figure(data_uri(Path(path).read_bytes(), "image/png"), caption)


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1e4 else f"{value:,.0f}"
    return str(value)


def table(frame: pd.DataFrame, caption: str, limit: int | None = None, note: str = "") -> Table:
    """`frame` as a printed table (numbers to three significant digits); with `limit`, its first
    rows only, and the note says how many of how many are shown."""
    shown = frame if limit is None or len(frame) <= limit else frame.head(limit)
    if len(shown) < len(frame):
        note = f"{note} The first {len(shown)} of {len(frame)} rows are shown.".strip()
    rows = [[_cell(v) for v in row] for row in shown.itertuples(index=False)]
    return Table(caption, [str(c) for c in frame.columns], rows, note)


def _code(text: str) -> Any:
    """`text`, escaped, with its `backquoted` spans (commands, file names) set as code."""
    from markupsafe import Markup, escape

    parts = str(escape(text)).split("`")
    return Markup("".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts)))


def render(page: Page) -> str:
    """The page as one HTML document (templates/report.html with its CSS and script inlined)."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("searcher.report", "templates"), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["code"] = _code
    return env.get_template("report.html").render(page=page, csp=CSP)


def write(text: str, path: Path) -> None:
    """Writes the page `text` to `path` whole or not at all (`searcher.outputs.write_text`)."""
    write_text(path, text, what="the report", hint="Nothing was written: choose another --out.")
