"""An MCP server that is an OAuth resource server, with the official Python SDK's auth support
(`mcp.server.auth`): every bearer token is checked by introspection at the authorization server
(RFC 7662), and must have been issued for this server (RFC 8707, `aud`).

Env: RS_PORT, RS_NAME, AS_URL. Tool `count` answers "NAME N" (N counts the calls).
Test hook: GET /_test/stats answers {"unauthorized_with_token": N}, the 401s answered to requests
that carried a bearer token (one the server refused: expired, revoked, or not for it); a request
without one (a client finding out it must log in) is not counted.
"""

import base64
import json
import os
import urllib.error
import urllib.parse
import urllib.request

import anyio
import uvicorn
from starlette.requests import Request
from starlette.responses import JSONResponse

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


unauthorized_with_token = 0


@server.custom_route("/_test/stats", methods=["GET"])
async def stats(request: Request) -> JSONResponse:
    return JSONResponse({"unauthorized_with_token": unauthorized_with_token})


def counting_401s(app):
    """The app, counting the 401s it answers to requests that carried a bearer token."""

    async def wrapped(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)
        bearer = any(
            key == b"authorization" and value.lower().startswith(b"bearer ")
            for key, value in scope["headers"]
        )

        async def counted(message):
            global unauthorized_with_token
            if message["type"] == "http.response.start" and message["status"] == 401 and bearer:
                unauthorized_with_token += 1
                print(f"401 for a presented token: {scope['method']} {scope['path']}", flush=True)
            await send(message)

        return await app(scope, receive, counted)

    return wrapped


print(f"resource server {NAME} on {RESOURCE}", flush=True)
# What `server.run(transport="streamable-http")` does, with the counting around the app.
uvicorn.run(
    counting_401s(server.streamable_http_app(host="127.0.0.1")),
    host="127.0.0.1",
    port=PORT,
    log_level="info",
)
