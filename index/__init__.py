"""Whoosh index and the judge's search engine over glossary entries (no Discord here)."""
