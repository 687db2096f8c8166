"""conteur's clients: a Python websocket client with an offline outbox; web/ is the web app."""

from pathlib import Path

# The web app's folder, which the server serves: pyproject.toml's ``conteur.web`` entry
# point names it, so the server finds it without importing this package by name.
WEB_DIR = Path(__file__).resolve().parent / "web"
