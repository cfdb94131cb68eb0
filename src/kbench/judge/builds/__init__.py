"""builds."""
