"""processes."""
