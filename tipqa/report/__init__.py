"""The build report: the Markdown report and its figures, and the static explorer page."""
