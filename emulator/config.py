"""Settings shared across botemu's services: addresses and defaults.

botemu listens on 127.0.0.1 unless told otherwise; any other address is an explicit flag.
"""

from __future__ import annotations

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 9070
"""The documented default port of a running botemu (``botemu serve``)."""


def platform_url(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> str:
    """The base URL of botemu's calling platform API (``links.call`` points under it)."""
    return f"http://{host}:{port}/_botemu"
