"""Modal screens: approval, call detail, server detail, server log, help, resume."""
