"""Shared pieces of the LLM backends: prompt templates, answer parsing, the call cache."""
