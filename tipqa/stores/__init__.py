"""Stores that several processes and hosts write at once: one SQLite file per writer."""
