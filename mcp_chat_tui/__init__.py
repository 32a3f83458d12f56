"""mcp-chat-tui: a terminal chat for local MLX models that call tools from MCP servers."""

__version__ = "0.1.0"
