"""The demo world: a synthetic corpus and questions with labels known by construction."""
