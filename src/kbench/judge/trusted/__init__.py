"""trusted."""
