"""conteur's clients: a Python websocket client with an offline outbox; web/ is the web app."""
