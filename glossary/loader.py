"""Find, read and dispatch source files to the right parser, then link the whole corpus.

Reading is strict on purpose: a judge must be able to trust every quote, so a file that is
empty, binary or not UTF-8 is refused with one line naming the file (and line), instead of
being half-decoded. One bad file never stops the others from loading.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import Path

from glossary.house import parse_house_rulings
from glossary.limits import long_lines
from glossary.linking import link_corpus
from glossary.mediawiki import looks_like_glossary_page, parse_glossary_page
from glossary.model import Corpus, ParsedDocument, SourceError
from glossary.obsidian import looks_like_obsidian_ruleset, parse_obsidian

log = logging.getLogger(__name__)

SHIPPED_SOURCES = Path(__file__).resolve().parent / "sources"
MARKDOWN_SUFFIXES = {".md", ".markdown"}  # house rulings; every other source is a plain-text export
SOURCE_SUFFIXES = {".txt", *MARKDOWN_SUFFIXES}
ENV_SOURCES = "L5R_SOURCES"
ENV_HOUSE = "L5R_HOUSE_RULINGS"


def default_sources() -> list[Path]:
    """Configured sources: ``L5R_SOURCES`` (os.pathsep-separated) or the shipped corpus, plus house rulings."""
    configured = os.environ.get(ENV_SOURCES, "").strip()
    paths = [Path(p) for p in configured.split(os.pathsep) if p.strip()] if configured else [SHIPPED_SOURCES]
    house = os.environ.get(ENV_HOUSE, "").strip()
    if house:
        paths.append(Path(house))
    return paths


def _is_source_file(path: Path) -> bool:
    """A file a folder contributes: a text or Markdown document that is not a README or a dotfile."""
    return (
        path.suffix.lower() in SOURCE_SUFFIXES
        and not path.name.startswith(".")
        and not path.stem.upper().startswith("README")
        and path.is_file()
    )


def expand(paths: Iterable[Path]) -> tuple[list[Path], list[SourceError]]:
    """Files named directly, plus the source files inside named folders (sorted; READMEs and dotfiles skipped).

    A file named twice (directly and through its folder, say) is read once: two copies of one file would
    only produce renamed duplicate entries.
    """
    files: dict[Path, Path] = {}  # resolved path -> the path as given (the one cited)
    errors: list[SourceError] = []
    for path in paths:
        try:
            if path.is_dir():
                found = [child for child in sorted(path.iterdir()) if _is_source_file(child)]
            elif path.is_file():
                found = [path]
            else:
                errors.append(SourceError(str(path), "no such file or folder"))
                continue
        except OSError as exc:
            errors.append(SourceError(str(path), f"cannot read: {exc.strerror or exc}"))
            continue
        for file in found:
            files.setdefault(file.resolve(), file)
    return list(files.values()), errors


def unreadable_sources(paths: Iterable[Path] | None = None) -> list[SourceError]:
    """Configured sources that cannot be read at all: a path that does not exist, a folder that cannot be
    listed, a file that cannot be opened. The bot and the command lines refuse to start on any of these
    (a judge would otherwise be served a silently smaller rulebook); a file that opens but does not
    parse is reported and skipped as usual.
    """
    files, errors = expand(default_sources() if paths is None else [Path(p) for p in paths])
    for path in files:
        try:
            with path.open("rb"):
                pass
        except OSError as exc:
            errors.append(SourceError(display_name(path), f"cannot read: {exc.strerror or exc}"))
    return errors


def unreadable_message(errors: list[SourceError]) -> str:
    """One line naming what cannot be read (the first three, then how many more)."""
    shown = "; ".join(str(e) for e in errors[:3])
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return f"cannot read the sources: {shown}{more}"


def display_name(path: Path) -> str:
    """Shipped files are cited by bare name; others by the path the user gave."""
    try:
        path.resolve().relative_to(SHIPPED_SOURCES)
        return path.name
    except ValueError:
        return str(path)


def read_source(path: Path, name: str | None = None) -> str:
    """Return the file's text, or raise SourceError for empty, binary or non-UTF-8 files."""
    name = name or display_name(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SourceError(name, f"cannot read: {exc.strerror or exc}") from None
    if not data.strip():
        raise SourceError(name, "empty file")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise SourceError(name, "UTF-16 text, not UTF-8; re-save the file as UTF-8", 1)
    if b"\x00" in data:
        line = data[: data.index(b"\x00")].count(b"\n") + 1
        raise SourceError(name, "binary file (NUL byte), not a text document", line)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SourceError(
            name,
            f"not UTF-8 (byte 0x{data[exc.start]:02x}; Windows-1252 curly quotes?); re-save the file as UTF-8",
            line,
        ) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def detect_kind(text: str, path: Path, name: str) -> str:
    """Which parser reads this text: decided by content (and the .md suffix for house rulings)."""
    if path.suffix.lower() in MARKDOWN_SUFFIXES:
        return "house"
    if looks_like_obsidian_ruleset(text):
        return "obsidian-hand"
    if looks_like_glossary_page(text):
        return "glossary"
    raise SourceError(
        name,
        "unknown kind of document (expected a glossary page with '[edit] Term' entries, "
        "the Obsidian Hand Ruleset, or a Markdown house-rulings file)",
        1,
    )


def parse_file(path: Path) -> ParsedDocument:
    """Read and parse one file; raises SourceError with the file (and line) when it cannot."""
    name = display_name(path)
    text = read_source(path, name)
    kind = detect_kind(text, path, name)
    if kind == "glossary":
        doc = parse_glossary_page(text, name)
    elif kind == "obsidian-hand":
        doc = parse_obsidian(text, name)
    else:
        doc = parse_house_rulings(text, name)
    doc.anomalies.extend(long_lines(text, name))
    return doc


def load_corpus(paths: Iterable[Path] | None = None) -> Corpus:
    """Parse every source (default: the configured ones) into one linked corpus; errors are collected, not raised."""
    files, errors = expand(default_sources() if paths is None else [Path(p) for p in paths])
    documents: list[ParsedDocument] = []
    for path in files:
        try:
            documents.append(parse_file(path))
        except SourceError as exc:
            errors.append(exc)
        except Exception as exc:  # a parser bug must not take the other sources down with it
            log.debug("parser failed on %s", path, exc_info=True)
            errors.append(SourceError(display_name(path), f"could not be parsed ({type(exc).__name__}: {exc})"))
    corpus = Corpus(entries=[], errors=errors, files=[d.file for d in documents])
    for doc in documents:
        corpus.entries.extend(doc.entries)
        corpus.anomalies.extend(doc.anomalies)
    link_corpus(corpus)
    return corpus
