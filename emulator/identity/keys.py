"""The identity service's RSA signing keys, persisted, published as a JWKS and rotated.

Keys live in ``<certs dir>/signing-keys/`` (mode 0700), one pair of files per key:

``<kid>.key``   the PKCS#8 PEM private key, mode 0600
``<kid>.pem``   a self-signed certificate for it (the JWKS publishes it as ``x5c``)
``index.json``  ``{"version": 1, "keys": [{"kid", "created", "retired"}]}``, newest first

The ``kid`` of a key is its ``x5t`` (the base64url SHA-1 thumbprint of the certificate, as the real
identity provider does). One key is *current* (``retired`` is null) and signs new tokens; rotation
makes a new current key and retires the old one, which stays published for a grace period so
tokens it signed still validate, and is then dropped from the index and its files are removed.

Every file is written atomically (a private temporary file, then chmod and rename), and changes to
the directory are serialised with a lock file so that two processes never make two current keys
(``keyfiles.py`` does both, and reads the index). Every error is an ``IdentityError`` with a
one-line message.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from emulator.identity.errors import IdentityError
from emulator.identity.keyfiles import (
    CERT_MODE,
    DIR_MODE,
    INDEX_FILE,
    KEY_MODE,
    LOCK_FILE,
    locked,
    read_file,
    read_index,
    tighten,
    write_file,
)
from emulator.jsonutil import JSON

__all__ = [
    "CERT_DAYS",
    "CERT_MODE",
    "DIR_MODE",
    "INDEX_FILE",
    "KEYS_DIR",
    "KEY_BITS",
    "KEY_MODE",
    "LOCK_FILE",
    "IdentityError",
    "KeyStore",
    "SigningKey",
    "b64url",
    "endorsed_channels",
    "thumbprint",
]

KEYS_DIR = "signing-keys"
KEY_BITS = 2048
CERT_DAYS = 5 * 365


def b64url(data: bytes) -> str:
    """Base64url without padding (RFC 7515 §2)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64url_uint(value: int) -> str:
    return b64url(value.to_bytes((value.bit_length() + 7) // 8 or 1, "big"))


@dataclass(frozen=True)
class SigningKey:
    """One RSA signing key with its self-signed certificate.

    ``created`` and ``retired`` are seconds since the epoch; ``retired`` is None for the current key.
    """

    kid: str
    private_key: rsa.RSAPrivateKey
    certificate: x509.Certificate
    created: float
    retired: float | None
    endorsements: tuple[str, ...] = ()

    @property
    def public_key(self) -> rsa.RSAPublicKey:
        return self.private_key.public_key()

    @property
    def x5t(self) -> str:
        """The base64url SHA-1 thumbprint of the DER certificate, without padding."""
        return thumbprint(self.certificate)

    def jwk(self) -> dict[str, JSON]:
        """The key as a JWK (RFC 7517): public parts only, with its certificate in ``x5c``."""
        numbers = self.public_key.public_numbers()
        der = self.certificate.public_bytes(serialization.Encoding.DER)
        jwk: dict[str, JSON] = {
            "kty": "RSA",
            "use": "sig",
            "alg": "RS256",
            "kid": self.kid,
            "x5t": self.x5t,
            "n": _b64url_uint(numbers.n),
            "e": _b64url_uint(numbers.e),
            "x5c": [base64.b64encode(der).decode("ascii")],
        }
        if self.endorsements:
            jwk["endorsements"] = list(self.endorsements)
        return jwk


def thumbprint(certificate: x509.Certificate) -> str:
    """``x5t``: base64url SHA-1 of the DER certificate (RFC 7515 §4.1.7), without padding."""
    return b64url(hashlib.sha1(certificate.public_bytes(serialization.Encoding.DER)).digest())


class KeyStore:
    """The signing keys of one botemu, kept in ``directory / "signing-keys"``.

    Nothing is read or written until the first call. ``clock`` gives the time of creation and
    retirement and decides when a retired key has outlived ``grace_seconds``. ``endorsements``
    (channel ids) are published with every key, in the order given, each once; they are not
    persisted. An endorsement that is not a non-empty string without spaces is an
    ``IdentityError``.
    """

    def __init__(
        self,
        directory: Path,
        *,
        clock: Callable[[], float] = time.time,
        grace_seconds: float = 86400.0,
        endorsements: Sequence[str] = (),
    ) -> None:
        self.directory = Path(directory) / KEYS_DIR
        self.grace_seconds = grace_seconds
        self.endorsements = endorsed_channels(endorsements)
        self._clock = clock
        self._keys: list[SigningKey] | None = None  # newest first; [0] is the current key

    def current(self) -> SigningKey:
        """The key that signs new tokens; made (and persisted) on first use."""
        return self._loaded()[0]

    def rotate(self) -> SigningKey:
        """Make a new current key; the previous one is retired now and stays published for the
        grace period."""
        with locked(self.directory):
            now = self._clock()
            keys, gone = self._read(now)  # the directory may have changed since it was loaded
            fresh = self._generate(now)
            keys = [fresh, *(k if k.retired is not None else replace(k, retired=now) for k in keys)]
            gone += [k.kid for k in keys if not self._live(k, now)]
            self._keys = self._save([k for k in keys if self._live(k, now)], gone)
        return fresh

    def published(self) -> list[SigningKey]:
        """The current key, then the retired keys still within the grace period, newest first.

        Keys past it are dropped from the index and their files removed.
        """
        keys = self._loaded()
        if all(self._live(k, self._clock()) for k in keys):
            return list(keys)
        self._keys = None
        return list(self._loaded())

    def find(self, kid: str) -> SigningKey | None:
        """The published key with this ``kid``, or None (``published()`` without its copy when
        no key has outlived its grace: every token check asks)."""
        keys = self._loaded()
        now, grace = self._clock(), self.grace_seconds
        for key in keys:
            if key.retired is not None and now >= key.retired + grace:  # not _live: prune, look
                return next((k for k in self.published() if k.kid == kid), None)
        for key in keys:
            if key.kid == kid:
                return key
        return None

    def jwks(self) -> dict[str, JSON]:
        """The key document (RFC 7517 JWK Set) of the published keys."""
        return {"keys": [k.jwk() for k in self.published()]}

    # --- loading and saving ---------------------------------------------------------------------

    def _live(self, key: SigningKey, now: float) -> bool:
        return key.retired is None or now < key.retired + self.grace_seconds

    def _loaded(self) -> list[SigningKey]:
        """The published keys, from memory, or else from the directory (pruned, and with a new
        current key when there is none)."""
        if self._keys is None:
            with locked(self.directory):
                now = self._clock()
                keys, gone = self._read(now)
                if not keys or keys[0].retired is not None:
                    keys = [self._generate(now), *keys]
                self._keys = self._save(keys, gone)
        return self._keys

    def _save(self, keys: list[SigningKey], gone: list[str]) -> list[SigningKey]:
        """Write the index of ``keys`` (when it changed) and remove the files of ``gone`` kids."""
        index = {
            "version": 1,
            "keys": [{"kid": k.kid, "created": k.created, "retired": k.retired} for k in keys],
        }
        data = json.dumps(index, indent=2).encode() + b"\n"
        try:
            unchanged = self._index.read_bytes() == data
        except OSError:
            unchanged = False
        if not unchanged:
            write_file(self._index, data, CERT_MODE)
        for path in (path for kid in gone for path in self._files(kid)):
            try:
                path.unlink(missing_ok=True)
            except OSError as e:
                raise IdentityError(f"cannot remove: {e.strerror or e}", path=path) from None
        return keys

    @property
    def _index(self) -> Path:
        return self.directory / INDEX_FILE

    def _files(self, kid: str) -> tuple[Path, Path]:
        return self.directory / f"{kid}.key", self.directory / f"{kid}.pem"

    def _read(self, now: float) -> tuple[list[SigningKey], list[str]]:
        """The live keys of the index, newest first, and the kids of those past their grace.

        At most one key is current: the newest unretired one. Any other unretired key counts as
        retired when the newest was made. The files of expired keys are not read.
        """
        keys: list[SigningKey] = []
        gone: list[str] = []
        current_created: float | None = None
        for kid, created, retired in sorted(read_index(self._index), key=lambda e: -e[1]):
            if retired is None:
                if current_created is None:
                    current_created = created
                else:
                    retired = current_created
            if retired is not None and now >= retired + self.grace_seconds:
                gone.append(kid)
            else:
                keys.append(self._load_key(kid, created, retired))
        keys.sort(key=lambda k: (k.retired is not None, -k.created))
        return keys, gone

    def _load_key(self, kid: str, created: float, retired: float | None) -> SigningKey:
        key_file, cert_file = self._files(kid)
        key_pem, cert_pem = read_file(key_file), read_file(cert_file)
        try:
            private_key = serialization.load_pem_private_key(key_pem, password=None)
        except (ValueError, TypeError) as e:
            raise IdentityError(
                f"not an unencrypted PEM private key ({e})", path=key_file
            ) from None
        if not isinstance(private_key, rsa.RSAPrivateKey):
            raise IdentityError("not an RSA private key", path=key_file)
        try:
            certificate = x509.load_pem_x509_certificate(cert_pem)
        except ValueError:
            raise IdentityError("not a PEM certificate", path=cert_file) from None
        if certificate.public_key() != private_key.public_key():
            raise IdentityError(f"does not belong to {key_file.name}", path=cert_file)
        tighten(key_file)
        return SigningKey(kid, private_key, certificate, created, retired, self.endorsements)

    def _generate(self, now: float) -> SigningKey:
        private_key = new_private_key()
        certificate = _self_signed(private_key, now)
        kid = thumbprint(certificate)
        key_file, cert_file = self._files(kid)
        key_pem = private_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        write_file(key_file, key_pem, KEY_MODE)
        write_file(cert_file, certificate.public_bytes(serialization.Encoding.PEM), CERT_MODE)
        return SigningKey(kid, private_key, certificate, now, None, self.endorsements)


# --- helpers ------------------------------------------------------------------------------------


def new_private_key() -> rsa.RSAPrivateKey:
    """A new RSA key of ``KEY_BITS`` to sign tokens with (30 to 300 ms of CPU: the suite's tests
    take theirs from a pool, ``tests/conftest.py``)."""
    return rsa.generate_private_key(public_exponent=65537, key_size=KEY_BITS)


def _self_signed(private_key: rsa.RSAPrivateKey, now: float) -> x509.Certificate:
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "botemu"),
            x509.NameAttribute(NameOID.COMMON_NAME, "botemu token signing"),
        ]
    )
    start = dt.datetime.fromtimestamp(now, dt.UTC) - dt.timedelta(hours=1)
    return (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(private_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + dt.timedelta(days=CERT_DAYS))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(private_key, hashes.SHA256())
    )


def endorsed_channels(channels: object) -> tuple[str, ...]:
    """Channel ids to endorse the keys for (a list or tuple of strings), each once, in order.

    ``IdentityError`` for anything else, or for a channel id an activity could not carry (empty,
    or with whitespace): a configuration file or a command line reads its value with this.
    """
    if not isinstance(channels, list | tuple):
        raise IdentityError(f"endorsements are a list of channel ids, not {channels!r}")
    for channel in channels:
        if not isinstance(channel, str) or not channel or channel.split() != [channel]:
            raise IdentityError(f"{channel!r} cannot be an endorsed channel id")
    return tuple(dict.fromkeys(channels))
