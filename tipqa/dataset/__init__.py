"""The files a build writes (labels, splits, qrels), and the code that reads them back."""
