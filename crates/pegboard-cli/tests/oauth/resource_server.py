"""An MCP server that is an OAuth resource server, with the official Python SDK's auth support
(`mcp.server.auth`): every bearer token is checked by introspection at the authorization server
(RFC 7662), and must have been issued for this server (RFC 8707, `aud`).

Env: RS_PORT, RS_NAME, AS_URL. Tool `count` answers "NAME N" (N counts the calls).
"""

import base64
import json
import os
import urllib.error
import urllib.parse
import urllib.request

import anyio

from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer

PORT = int(os.environ["RS_PORT"])
NAME = os.environ.get("RS_NAME", "rs")
AS_URL = os.environ["AS_URL"]
RESOURCE = f"http://127.0.0.1:{PORT}/mcp"


def introspect(token: str) -> dict | None:
    request = urllib.request.Request(
        f"{AS_URL}/token/introspection",
        data=urllib.parse.urlencode({"token": token}).encode(),
        headers={
            "content-type": "application/x-www-form-urlencoded",
            "authorization": "Basic " + base64.b64encode(b"resource-server:resource-server-secret").decode(),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.load(answer)
    except urllib.error.URLError:
        return None


class Introspection(TokenVerifier):
    async def verify_token(self, token: str) -> AccessToken | None:
        info = await anyio.to_thread.run_sync(introspect, token)
        if not info or not info.get("active"):
            return None
        audience = info.get("aud") or []
        audience = audience if isinstance(audience, list) else [audience]
        return AccessToken(
            token=token,
            client_id=info.get("client_id", ""),
            scopes=(info.get("scope") or "").split(),
            expires_at=info.get("exp"),
            resource=RESOURCE if RESOURCE in audience else None,
        )


server = MCPServer(
    NAME,
    token_verifier=Introspection(),
    auth=AuthSettings(
        issuer_url=AS_URL,
        resource_server_url=RESOURCE,
        required_scopes=["mcp:tools"],
        validate_token_resource=True,
    ),
)
calls = 0


@server.tool()
def count() -> str:
    """Count the calls."""
    global calls
    calls += 1
    return f"{NAME} {calls}"


print(f"resource server {NAME} on {RESOURCE}", flush=True)
server.run(transport="streamable-http", host="127.0.0.1", port=PORT)
