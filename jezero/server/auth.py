"""Client keys: made once, shown once, stored only as a SHA-256 digest.

A key is a random bearer token. The config keeps `key_sha256`, so a copy of the config (or of a
backup, or a screen share of it) holds nothing that opens the server. Each HTTP request's key is
hashed and looked up among the current clients; revoking a client is deleting its lines.
"""

from __future__ import annotations

import hashlib
import secrets

from mcp.server.auth.provider import AccessToken

from jezero.server.clients import ClientRegistry

KEY_PREFIX = "jz_"  # makes a leaked key recognisable to secret scanners and to people
KEY_BYTES = 32  # 256 bits of randomness: guessing is out of the question, so no rate limit is needed

SCOPE_READ = "read"
SCOPE_UPLOAD = "upload"


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(KEY_BYTES)


def key_digest(key: str) -> str:
    """The SHA-256 hex digest the config stores for a key."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _toml_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def client_toml(name: str, digest: str, sources: list[str] | None = None, upload: bool = False) -> str:
    """The `[[clients]]` block for a key, ready to paste into the config."""
    sources = sources or ["*"]
    lines = [
        "[[clients]]",
        f"name = {_toml_string(name)}",
        f"key_sha256 = {_toml_string(digest)}",
        f"sources = [{', '.join(_toml_string(s) for s in sources)}]",
    ]
    if upload:
        lines.append("upload = true")
    return "\n".join(lines) + "\n"


class ClientKeyVerifier:
    """The SDK's TokenVerifier for client keys: the key's digest must belong to a client of the
    current config. The client's name becomes the token's client_id, which the tools use to find
    its source patterns."""

    def __init__(self, registry: ClientRegistry):
        self.registry = registry

    async def verify_token(self, token: str) -> AccessToken | None:
        if not token:
            return None
        client = self.registry.by_digest(key_digest(token))
        if client is None:
            return None
        scopes = [SCOPE_READ] + ([SCOPE_UPLOAD] if client.upload else [])
        return AccessToken(token=token, client_id=client.name, scopes=scopes)
