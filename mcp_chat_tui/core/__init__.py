"""Types and helpers every layer may import: paths, tool descriptions, call outcomes."""
