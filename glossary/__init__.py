"""Parse L5R rule documents (glossary pages, the Obsidian Hand ruleset, house rulings) into entries.

This layer knows nothing of search or Discord: it turns source files into ``Entry`` objects.
"""

from glossary.model import Anomaly, Change, Corpus, CrossRef, Entry, Location, SourceError

__all__ = ["Anomaly", "Change", "Corpus", "CrossRef", "Entry", "Location", "SourceError"]
