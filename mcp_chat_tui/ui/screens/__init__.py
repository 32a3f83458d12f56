"""Modal screens: approval, call detail, server detail, server log, help, resume."""

from pathlib import Path

STYLES_FOLDER = Path(__file__).parent  # every screen's style file (its ``CSS_PATH``) is here
