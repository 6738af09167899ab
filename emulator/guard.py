"""The one place where botemu checks who is talking to it: Host, Origin and the control secret.

botemu runs on a developer's machine, next to the browser they use for everything else. A web
page on another origin can send requests to ``http://127.0.0.1:9070`` (a form, a ``no-cors``
fetch), and a page whose own name resolves to 127.0.0.1 (DNS rebinding) can even read the
answers. ``guard`` stops both, for every app botemu serves (``service.make_app`` and
``botemu logview``), with one middleware (docs/security.md):

- **Host**, on every request: a loopback name or address (``127.0.0.1``, ``localhost``,
  ``[::1]``) or the address the connection arrived at, with the port botemu listens on; or a
  name given with ``--allow-host`` (``NAME`` any port, ``NAME:PORT`` that one). Else 403. A
  rebound page's requests carry its own name, so they stop here.
- **Origin**, on every state-changing request (POST, PUT, DELETE, PATCH) that has one: it must be
  botemu's own (the scheme it serves, a host and port that pass the Host check). Requests
  without Origin (the CLI, bots, the calling platform) pass.
- **Control POSTs** under ``/_botemu/`` (not ``/_botemu/pki/``, which bots use) need
  ``Content-Type: application/json`` (else 415: a cross-origin page would need a CORS
  preflight, which botemu never grants) and the header ``X-Botemu-Secret`` with this run's
  secret (else 403). The secret is made when the app is built (``secrets.token_urlsafe(32)``)
  and written, mode 0600, to ``<certs>/control-secret`` when it starts; botemu's own clients
  read it from there (``control_headers``).

No response ever carries an ``Access-Control-Allow-*`` header, except under
``CREDENTIALED_PREFIXES``: the Direct Line routes, which a page of another origin (a site that
hosts Web Chat) calls with a secret or token that botemu gave out; those routes check that
credential, and its trusted origins, themselves (``emulator/channels/directline``).
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
import tempfile
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from aiohttp import web

from emulator.errors import BotemuError

SECRET_FILE = "control-secret"
SECRET_HEADER = "X-Botemu-Secret"
CONTROL_PREFIX = "/_botemu/"
PLATFORM_PREFIXES = ("/_botemu/pki/",)
"""Under ``/_botemu/`` but part of the emulated platform (bots fetch the CRL, ask OCSP)."""
CREDENTIALED_PREFIXES = ("/v3/directline/",)
"""Routes for pages of any origin that hold a credential botemu gave them (Direct Line)."""
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
STATE_CHANGING = frozenset({"POST", "PUT", "DELETE", "PATCH"})
DEFAULT_CERTS = Path("certs")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


# --- the secret ----------------------------------------------------------------------------------


def secret_path(certs_dir: Path) -> Path:
    return Path(certs_dir) / SECRET_FILE


def new_secret() -> str:
    return secrets.token_urlsafe(32)


def write_secret(certs_dir: Path, secret: str) -> Path:
    """Write ``secret`` to ``<certs_dir>/control-secret``, mode 0600, atomically (a reader sees
    the old file or the new one, never half of one)."""
    directory = Path(certs_dir)
    directory.mkdir(parents=True, exist_ok=True)
    path = secret_path(directory)
    fd, tmp = tempfile.mkstemp(prefix=f".{SECRET_FILE}.", dir=directory)  # mode 0600
    try:
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(secret + "\n")
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read_secret(certs_dir: Path | None = None) -> str:
    """The control secret of the botemu that uses ``certs_dir`` (default ``certs/``); a missing
    or empty file is one BotemuError line naming it."""
    path = secret_path(certs_dir if certs_dir is not None else DEFAULT_CERTS)
    try:
        secret = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        raise BotemuError(
            f"{path}: no control secret (a running botemu writes it when it starts; give the "
            "--certs DIR of the botemu you talk to)"
        ) from None
    except (OSError, UnicodeDecodeError) as e:
        raise BotemuError(f"{path}: cannot read the control secret: {e}") from None
    if not secret:
        raise BotemuError(f"{path}: the control secret is empty")
    return secret


def control_headers(certs_dir: Path | None = None) -> dict[str, str]:
    """The headers of a control request to the botemu that uses ``certs_dir`` (default
    ``certs/``): its secret and the JSON content type."""
    return {SECRET_HEADER: read_secret(certs_dir), "Content-Type": "application/json"}


# --- hosts ---------------------------------------------------------------------------------------


def split_host(value: str) -> tuple[str, int | None] | None:
    """``name[:port]`` or ``[v6][:port]`` as (lower-case name without brackets, port); None
    when it does not parse."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[1:end], value[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else None
    elif value.count(":") == 1:
        name, port_text = value.split(":")
    elif ":" in value:
        return None
    else:
        name, port_text = value, None
    if not name:
        return None
    if port_text is None:
        return name, None
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        return None
    return name, int(port_text)


def _shown(name: str) -> str:
    return f"[{name}]" if ":" in name else name


@dataclass(frozen=True)
class Guard:
    """What one app accepts. ``secret`` None: the app has no control API (``botemu logview``)."""

    port: int | None = None
    """The configured port (the socket's own port is always accepted too)."""
    bind_host: str | None = None
    allow_hosts: tuple[str, ...] = ()
    secret: str | None = None
    tls: bool = False
    secret_file: Path | None = None
    """Where the secret is written. Another botemu started later with the same directory
    replaces the file: its secret (the file's) is accepted here too, so clients that read the
    file reach every botemu sharing it (both already share the signing keys in it)."""

    def host_allowed(self, host: str, local: tuple[str, int] | None, scheme: str) -> bool:
        parsed = split_host(host)
        if parsed is None:
            return False
        name, port = parsed
        for entry in self._allowed:
            if entry[0] == name and entry[1] in (None, port):
                return True
        if name not in self._own and (local is None or name != str(local[0]).lower()):
            return False
        effective = port if port is not None else (443 if scheme == "https" else 80)
        ports = {p for p in (self.port, local[1] if local else None) if p}
        return effective in ports

    @cached_property
    def _allowed(self) -> tuple[tuple[str, int | None], ...]:
        """``allow_hosts`` parsed (once: every request is checked against them)."""
        return tuple(entry for entry in map(split_host, self.allow_hosts) if entry is not None)

    @cached_property
    def _own(self) -> frozenset[str]:
        """The names that are botemu's own on every connection: loopback and ``bind_host``
        (the connection's own address is added per request)."""
        own = set(LOOPBACK)
        if self.bind_host and not _unspecified(self.bind_host):
            own.add(self.bind_host.lower().strip("[]"))
        return frozenset(own)

    def refusal(self, request: web.Request) -> web.Response | None:
        """The answer that refuses ``request``, or None when it may go on."""
        local = _local(request)
        host = request.headers.get("Host")
        if host is not None and not self.host_allowed(host, local, request.scheme):
            return _refuse(403, f"Host {host!r} is not allowed: botemu answers only to "
                           f"{self._answers_to(local)}; add --allow-host {host}")  # fmt: skip
        if request.method in STATE_CHANGING and not request.path.startswith(CREDENTIALED_PREFIXES):
            origin = request.headers.get("Origin")
            if origin is not None and not self._origin_allowed(origin, local, request.scheme):
                return _refuse(403, f"Origin {origin!r} is not allowed: state-changing requests "
                               "come from botemu's own pages, or with no Origin (the CLI, bots)")  # fmt: skip
            if self._is_control(request.path):
                if request.content_type != "application/json":
                    return _refuse(415, "control requests are JSON (Content-Type: "
                                   "application/json)")  # fmt: skip
                if not self.secret_ok(request.headers.get(SECRET_HEADER, "")):
                    return _refuse(403, f"the control API needs the header {SECRET_HEADER} with "
                                   f"this botemu's secret (the file {SECRET_FILE} in its "
                                   "certificates directory; botemu's clients read it)")  # fmt: skip
        return None

    def secret_ok(self, given: str) -> bool:
        """Whether ``given`` is this run's secret (or the one its file holds now), compared in
        constant time."""
        if self.secret is None or not given:
            return False
        offered = given.encode("utf-8", "replace")
        if hmac.compare_digest(offered, self.secret.encode()):
            return True
        if self.secret_file is None:
            return False
        try:
            current = self.secret_file.read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            return False
        return bool(current) and hmac.compare_digest(offered, current.encode())

    def _origin_allowed(self, origin: str, local: tuple[str, int] | None, scheme: str) -> bool:
        origin_scheme, sep, rest = origin.partition("://")
        if not sep or origin_scheme.lower() != scheme or "/" in rest:
            return False
        return self.host_allowed(rest, local, scheme)

    @staticmethod
    def _is_control(path: str) -> bool:
        return path.startswith(CONTROL_PREFIX) and not path.startswith(PLATFORM_PREFIXES)

    def _answers_to(self, local: tuple[str, int] | None) -> str:
        ports = sorted({p for p in (self.port, local[1] if local else None) if p})
        names = ["127.0.0.1", "localhost", "[::1]"]
        if self.bind_host and not _unspecified(self.bind_host) and self.bind_host not in LOOPBACK:
            names.append(_shown(self.bind_host))
        where = f" on port {' or '.join(map(str, ports))}" if ports else ""
        extra = f" and to {', '.join(self.allow_hosts)}" if self.allow_hosts else ""
        return f"{', '.join(names)}{where}{extra}"


def _unspecified(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


def _local(request: web.Request) -> tuple[str, int] | None:
    transport = request.transport
    sockname = transport.get_extra_info("sockname") if transport is not None else None
    if isinstance(sockname, tuple) and len(sockname) >= 2:
        return str(sockname[0]), int(sockname[1])
    return None


def _refuse(status: int, text: str) -> web.Response:
    """Plain text, never sniffed as HTML (it quotes the request's own Host or Origin)."""
    return web.Response(status=status, text=text + "\n",
                        headers={"X-Content-Type-Options": "nosniff"})  # fmt: skip


GUARD = web.AppKey("guard", Guard)


def protect(
    app: web.Application,
    *,
    port: int | None = None,
    bind_host: str | None = None,
    allow_hosts: Iterable[str] = (),
    certs_dir: Path | None = None,
    tls: bool = False,
) -> Guard:
    """Put the guard in front of every route of ``app`` (before it starts). With ``certs_dir``,
    the app has a control API: a new secret, written to ``<certs_dir>/control-secret`` when the
    app starts."""
    guard = Guard(
        port=port,
        bind_host=bind_host,
        allow_hosts=tuple(h.strip().lower() for h in allow_hosts if h.strip()),
        secret=new_secret() if certs_dir is not None else None,
        tls=tls,
        secret_file=secret_path(certs_dir) if certs_dir is not None else None,
    )
    app[GUARD] = guard

    @web.middleware
    async def _guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        refused = guard.refusal(request)
        return refused if refused is not None else await handler(request)

    app.middlewares.insert(0, _guard)
    app.on_response_prepare.append(_no_cors)
    if certs_dir is not None:
        directory, secret = Path(certs_dir), guard.secret
        assert secret is not None

        async def _write(app: web.Application) -> None:
            write_secret(directory, secret)

        app.on_startup.append(_write)
    return guard


async def _no_cors(request: web.Request, response: web.StreamResponse) -> None:
    """botemu grants no cross-origin access, whatever a route set (but the credentialed
    routes, which decide it themselves)."""
    if request.path.startswith(CREDENTIALED_PREFIXES):
        return
    for name in [n for n in response.headers if n.lower().startswith("access-control-allow-")]:
        del response.headers[name]
