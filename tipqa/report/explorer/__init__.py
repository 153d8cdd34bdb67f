"""The explorer: a static page to browse every question's label and the evidence behind it."""
