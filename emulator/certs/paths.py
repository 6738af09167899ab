"""A certificate directory: where its files are, reading and writing them, and its one error.

Every write is atomic (a private temporary file, then chmod and rename); key files are mode 0600
(a kept one is tightened), certificates 0644; ``locked`` serialises the writers of a directory.
Every error is a ``CertError``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.x509.oid import NameOID

from emulator import files
from emulator.errors import BotemuError
from emulator.files import lock_file, write_atomic

CA_FILE, CA_KEY_FILE = "ca.pem", "ca.key"
BOT_CERT_FILE, BOT_KEY_FILE = "bot.pem", "bot.key"
CLIENT_CERT_FILE, CLIENT_KEY_FILE = "platform.pem", "platform.key"
REVOKED_CERT_FILE, REVOKED_KEY_FILE = "platform-revoked.pem", "platform-revoked.key"
CRL_FILE = "ca.crl.pem"
LOCK_FILE = ".lock"

KEY_MODE = 0o600
CERT_MODE = 0o644


class CertError(BotemuError):
    """A certificate directory or file could not be created, read or used, or a name is unusable.

    ``path`` is the file or directory at fault (None for a bad argument); ``message`` says what is
    wrong, in one line.
    """

    def __init__(self, path: Path | None, message: str) -> None:
        super().__init__(message if path is None else f"{path}: {message}")
        self.path = path
        self.message = message


@dataclass(frozen=True, slots=True)
class CertPaths:
    """Where the files of one certificate directory are (they exist once ``ensure_certs`` ran)."""

    dir: Path
    ca: Path
    ca_key: Path
    bot_cert: Path
    bot_key: Path
    client_cert: Path
    client_key: Path
    crl: Path
    revoked_cert: Path
    revoked_key: Path

    @classmethod
    def of(cls, directory: Path) -> CertPaths:
        """The fixed file names inside ``directory`` (nothing is read or written)."""
        d = Path(directory)
        return cls(
            dir=d,
            ca=d / CA_FILE,
            ca_key=d / CA_KEY_FILE,
            bot_cert=d / BOT_CERT_FILE,
            bot_key=d / BOT_KEY_FILE,
            client_cert=d / CLIENT_CERT_FILE,
            client_key=d / CLIENT_KEY_FILE,
            crl=d / CRL_FILE,
            revoked_cert=d / REVOKED_CERT_FILE,
            revoked_key=d / REVOKED_KEY_FILE,
        )

    def pairs(self) -> tuple[tuple[Path, Path], ...]:
        """(certificate, key) for the CA, the bot and the platform client (the files every
        use needs: ``load_certs`` requires them; the CRL and the revoked pair are optional)."""
        return (
            (self.ca, self.ca_key),
            (self.bot_cert, self.bot_key),
            (self.client_cert, self.client_key),
        )


def load_certs(directory: Path) -> CertPaths:
    """The paths of an existing certificate directory; ``CertError`` names the first missing file."""
    paths = CertPaths.of(directory)
    if not paths.dir.is_dir():
        raise CertError(paths.dir, "no such directory; run 'botemu certs' first")
    for cert, key in paths.pairs():
        for path in (cert, key):
            if not path.is_file():
                raise CertError(path, "missing; run 'botemu certs' (--force to start over)")
    return paths


def common_name(cert_file: Path) -> str | None:
    """The subject common name of the first certificate in a PEM file, or None."""
    names = read_cert(cert_file).subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    if not names:
        return None
    value = names[0].value
    return value if isinstance(value, str) else value.decode("utf-8", "replace")


def read_pem(path: Path) -> bytes:
    """The bytes of a certificate or key file; ``CertError`` when it cannot be read."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise CertError(path, "missing; run 'botemu certs' (--force to start over)") from None
    except OSError as e:
        raise CertError(path, f"cannot read: {e.strerror or e}") from None


def read_cert(path: Path) -> x509.Certificate:
    """The first certificate of a PEM file; ``CertError`` when it is not one."""
    try:
        return x509.load_pem_x509_certificate(read_pem(path))
    except ValueError:
        raise CertError(path, "not a PEM certificate; use --force to replace it") from None


def write_file(path: Path, data: bytes, mode: int) -> None:
    """Write atomically (``files.write_atomic``); ``CertError`` when it cannot be written."""
    try:
        write_atomic(path, data, mode)
    except OSError as e:
        raise CertError(path, f"cannot write: {e.strerror or e}") from None


@contextlib.contextmanager
def locked(directory: Path) -> Iterator[None]:
    """Serialise ``ensure_certs`` runs on one directory (POSIX; elsewhere a no-op), so that two
    processes never mix certificates from two new CAs."""
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(lock_file(directory / LOCK_FILE))
        except OSError:  # a read-only directory: nothing can be written, so reading is safe
            pass
        yield


def tighten(key: Path) -> None:
    """A kept key file is made 0600 too."""
    try:
        files.tighten(key, KEY_MODE)
    except OSError as e:
        raise CertError(key, f"cannot set mode 0600: {e.strerror or e}") from None


