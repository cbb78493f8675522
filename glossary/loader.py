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

from glossary import kinds
from glossary.house import SUFFIXES as MARKDOWN_SUFFIXES
from glossary.linking import link_corpus
from glossary.model import Corpus, ParsedDocument, SourceError

log = logging.getLogger(__name__)

SHIPPED_SOURCES = Path(__file__).resolve().parent / "sources"
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
    named, errors = expand_named(paths)
    return [path for path, _name in named], errors


def expand_named(paths: Iterable[Path]) -> tuple[list[tuple[Path, str]], list[SourceError]]:
    """``expand``, with the name each file is cited by (see ``cited_name``)."""
    files: dict[Path, tuple[Path, str]] = {}  # resolved path -> (the path as given, the name cited)
    errors: list[SourceError] = []
    for path in paths:
        try:
            if path.is_dir():
                found = [(child, cited_name(child, path)) for child in sorted(path.iterdir()) if _is_source_file(child)]
            elif path.is_file():
                found = [(path, cited_name(path))]
            else:
                errors.append(SourceError(str(path), "no such file or folder"))
                continue
        except OSError as exc:
            errors.append(SourceError(str(path), f"cannot read: {exc.strerror or exc}"))
            continue
        for file, name in found:
            files.setdefault(file.resolve(), (file, name))
    return list(files.values()), errors


def cited_name(path: Path, folder: Path | None = None) -> str:
    """How answers cite a file: never by the host's absolute path (citations are posted in Discord).

    Shipped files by bare name; files found in a configured folder (house rulings, other sources)
    relative to that folder; a file named directly as given when that is a relative path, else by name.
    """
    try:
        path.resolve().relative_to(SHIPPED_SOURCES)
        return path.name
    except ValueError:
        pass
    if folder is not None:
        return path.relative_to(folder).as_posix()
    return path.name if path.is_absolute() else str(path)


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


def _utf16_without_bom(data: bytes) -> str | None:
    """"little-endian"/"big-endian" when ``data`` reads as UTF-16 saved without a byte-order mark, else None.

    Text in a Latin script saved as UTF-16 has a NUL in (nearly) every other byte, always on the same side;
    a binary file has NULs scattered on both. Only a clean decode of the whole file counts.
    """
    sample = data[:4096]
    half = len(sample) // 2
    if half < 4 or len(data) % 2:
        return None
    even, odd = sample[0::2].count(0), sample[1::2].count(0)
    if odd >= half * 0.3 and even <= half * 0.02:
        codec, order = "utf-16-le", "little-endian"
    elif even >= half * 0.3 and odd <= half * 0.02:
        codec, order = "utf-16-be", "big-endian"
    else:
        return None
    try:
        data.decode(codec)
    except UnicodeDecodeError:
        return None
    return order


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
    order = _utf16_without_bom(data)
    if order:
        raise SourceError(name, f"UTF-16 text ({order}, no byte-order mark), not UTF-8; re-save the file as UTF-8", 1)
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


def detect_kind(text: str, path: Path, name: str) -> kinds.DocumentKind:
    """Which kind (and so which parser) reads this text: the registry's detectors, in order."""
    kind = kinds.detect(text, path)
    if kind is None:
        raise SourceError(name, f"unknown kind of document (expected {kinds.expected()})", 1)
    return kind


def parse_file(path: Path, name: str | None = None) -> ParsedDocument:
    """Read and parse one file, cited as ``name``; raises SourceError with the file (and line) when it cannot."""
    name = name or display_name(path)
    text = read_source(path, name)
    kind = detect_kind(text, path, name)
    doc = kind.parse(text, name)
    for check in kind.checks:
        doc.anomalies.extend(check(text, name))
    return doc


def load_corpus(paths: Iterable[Path] | None = None) -> Corpus:
    """Parse every source (default: the configured ones) into one linked corpus; errors are collected, not raised."""
    files, errors = expand_named(default_sources() if paths is None else [Path(p) for p in paths])
    documents: list[ParsedDocument] = []
    for path, name in files:
        try:
            documents.append(parse_file(path, name))
        except SourceError as exc:
            errors.append(exc)
        except Exception as exc:  # a parser bug must not take the other sources down with it
            log.debug("parser failed on %s", path, exc_info=True)
            errors.append(SourceError(name, f"could not be parsed ({type(exc).__name__}: {exc})"))
    corpus = Corpus(entries=[], errors=errors, files=[d.file for d in documents])
    for doc in documents:
        corpus.entries.extend(doc.entries)
        corpus.anomalies.extend(doc.anomalies)
    link_corpus(corpus)
    return corpus
