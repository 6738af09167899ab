"""Fetching a skill manifest from an http(s) URL.

At most ``max_bytes`` are read (a larger ``Content-Length`` is refused before reading); the URL has
``timeout`` seconds to connect, between reads and in all (checked between reads), and may redirect
only to http(s). The format is the final URL's suffix, else its Content-Type, else unknown.
"""

from __future__ import annotations

import http.client
import time
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from emulator import __version__
from emulator.manifest.document import Format, ManifestError, format_of, size_text

ACCEPT = "application/json, application/yaml;q=0.9, */*;q=0.1"


def fetch(url: str, max_bytes: int, timeout: float) -> tuple[bytes, Format | None]:
    """The body of ``url`` and its format (None: unknown); raises ``ManifestError``."""
    try:
        data, kind, final = _download(url, max_bytes, timeout)
    except _RedirectRefused as e:
        raise ManifestError(url, f"redirected to a URL that is not http(s): {e}") from None
    except urllib.error.HTTPError as e:
        e.close()
        raise ManifestError(url, f"HTTP {e.code} {e.reason}") from None
    except urllib.error.URLError as e:
        if isinstance(e.reason, TimeoutError):
            raise ManifestError(url, f"no answer within {timeout:g} s") from None
        raise ManifestError(url, f"cannot fetch: {e.reason}") from None
    except TimeoutError:
        raise ManifestError(url, f"no answer within {timeout:g} s") from None
    except (OSError, http.client.HTTPException, ValueError) as e:
        raise ManifestError(url, f"cannot fetch: {e or type(e).__name__}") from None
    fmt = format_of(urlsplit(final).path)
    if fmt is None and "json" in kind:
        fmt = "json"
    elif fmt is None and "yaml" in kind:
        fmt = "yaml"
    return data, fmt


def _download(url: str, max_bytes: int, timeout: float) -> tuple[bytes, str, str]:
    """(the body, its Content-Type in lowercase, the final URL after redirects)."""
    deadline = time.monotonic() + timeout
    request = urllib.request.Request(
        url, headers={"Accept": ACCEPT, "User-Agent": f"botemu/{__version__}"}
    )
    opener = urllib.request.build_opener(_HttpOnlyRedirects)
    chunks: list[bytes] = []
    with opener.open(request, timeout=timeout) as response:
        length = response.headers.get("Content-Length", "")
        if length.isdigit() and int(length) > max_bytes:
            raise ManifestError(url, f"larger than {size_text(max_bytes)} ({length} bytes)")
        size = 0
        while chunk := response.read1(64 * 1024):
            size += len(chunk)
            if size > max_bytes:
                raise ManifestError(url, f"larger than {size_text(max_bytes)}")
            if time.monotonic() > deadline:
                raise TimeoutError
            chunks.append(chunk)
        kind = str(response.headers.get("Content-Type", "")).lower()
        final = str(response.geturl())
    return b"".join(chunks), kind, final


class _RedirectRefused(Exception):
    pass


class _HttpOnlyRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(
        self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str
    ) -> Any:
        if urlsplit(newurl).scheme.lower() not in ("http", "https"):
            fp.close()
            raise _RedirectRefused(newurl)
        return super().redirect_request(req, fp, code, msg, headers, newurl)
