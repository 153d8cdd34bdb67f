"""Corpus readers: local files or a Hugging Face dataset, as a stream of documents."""

from tipqa.sources.corpus.base import CORPUS_READERS, Corpus, DocumentParser, get_field

__all__ = ["CORPUS_READERS", "Corpus", "DocumentParser", "get_field"]
