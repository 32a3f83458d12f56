"""The full-screen Textual app. Widgets never call the engine or the hub: the app owns them."""
