"""The bundled demo: an offline MCP server and a tiny model that calls its tools."""
