"""The MCP server: the agent's tools over stdio (`factledger mcp`) and streamable HTTP (`/mcp`)."""
