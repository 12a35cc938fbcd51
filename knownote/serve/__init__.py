"""Serving the core to other programs: the MCP server (`knownote mcp`).

`tools` does what each MCP tool does, without MCP: the open store and settings in, JSON-ready
data out, errors a client can cause raised as `KnowNoteError`s in words. `server` registers those
as MCP tools and resources with descriptions and schemas (the official `mcp` SDK) and serves
them over stdio or streamable HTTP; `bearer` puts the app's password in front of HTTP.
`background` runs that HTTP server on a thread of the app's own process, over the app's store
(DuckDB lets one process open the database); `relay` passes a stdio session on to it when
`knownote mcp` finds the database held by the app.

May import: read, index, store, search, answer, pipeline, notebooks, access.
"""

PATH = "/mcp"  # where MCP is served over HTTP, by `knownote mcp --http` and by the app
