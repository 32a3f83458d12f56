"""servers layer."""
