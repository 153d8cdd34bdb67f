"""Where a build's corpus and questions come from (one seam each), and the demo world."""
