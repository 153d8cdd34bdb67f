"""The steps of Algorithm 1, as library functions over records (no Luigi here)."""
