"""The order in which a model saw its training data (one seam), and its indexes."""
