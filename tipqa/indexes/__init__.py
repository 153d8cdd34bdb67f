"""The token and vector indexes, the embedders and the chunking they use."""
