"""The bundled demo: an offline MCP server and a tiny model that calls its tools."""

# What the bundled model can be asked: the questions of the kind it was trained on (docs/reference.md,
# "The demo model"), said when it starts, since a person's first "hello" is outside what it knows.
TRY_ASKING = ("what is 12 * 7?", "what time is it in Tokyo?", "convert 5 km to miles")


def try_asking_line() -> str:
    """One sentence for the start of a conversation with the demo model."""
    asked = ", ".join(f'"{question}"' for question in TRY_ASKING[:-1]) + f' or "{TRY_ASKING[-1]}"'
    return f"The demo model is a toy that only knows the demo server's tools: try {asked}."
