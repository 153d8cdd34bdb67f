"""The vocabulary every package imports: records, settings, registry, stats, layout, I/O."""
