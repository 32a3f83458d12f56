"""engine layer."""
