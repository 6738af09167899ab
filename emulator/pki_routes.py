"""The botemu CA's revocation services, over HTTP (spec: Authentication, Calling platform to bot 2:
the bot validates that the platform's client certificate "is not revoked").

``GET /_botemu/pki/crl``                the CA's current CRL, DER (``application/pkix-crl``): the
                                        distribution point every botemu certificate names
``POST /_botemu/pki/ocsp``              an OCSP responder (RFC 6960): a DER ``OCSPRequest`` in
                                        (``application/ocsp-request``), a DER ``OCSPResponse``
                                        out (``application/ocsp-response``)
``GET /_botemu/pki/ocsp/{base64}``      the same, the request base64 in the path (RFC 6960 A.1.1)

Both read the certificate directory written by ``botemu certs`` (``emulator.certs``); the CRL is
renewed (``current_crl``) when it has under 7 days left. The OCSP responder is the CA itself, and
answers from the CRL: *revoked* for a serial number the CRL lists, *good* for any other serial of
the botemu CA (RFC 6960 2.2: "good" means not revoked; the probe's certificates are never
stored, so there is no list of issued ones), *unknown* for another issuer. Requests are at most
64 KiB; a request that does not parse gets a ``malformedRequest`` response. Without a CA in the
directory both routes answer 404 with ``{"error": ...}``.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from datetime import UTC, datetime, timedelta
from pathlib import Path

from aiohttp import web
from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509 import ocsp

from emulator.certs import (
    CRL_PATH,
    OCSP_PATH,
    CertError,
    CertPaths,
    current_crl,
    load_ca,
    signer,
)

MAX_OCSP_REQUEST = 64 * 1024
CRL_CONTENT_TYPE = "application/pkix-crl"
OCSP_REQUEST_TYPE = "application/ocsp-request"
OCSP_RESPONSE_TYPE = "application/ocsp-response"
OCSP_VALIDITY = timedelta(hours=1)  # nextUpdate of an OCSP answer


def pki_routes(certs_dir: Path) -> list[web.RouteDef]:
    """The CRL and OCSP routes for the certificate directory ``certs_dir``."""
    paths = CertPaths.of(certs_dir)

    async def crl(request: web.Request) -> web.StreamResponse:
        try:
            current = await asyncio.to_thread(current_crl, paths.dir)
        except CertError as e:
            return _missing(paths, e)
        return web.Response(
            body=current.public_bytes(serialization.Encoding.DER),
            content_type=CRL_CONTENT_TYPE,
            headers={"Cache-Control": "no-cache"},
        )

    async def ocsp_post(request: web.Request) -> web.StreamResponse:
        if request.content_length is not None and request.content_length > MAX_OCSP_REQUEST:
            return _too_big()
        body = bytearray()
        while chunk := await request.content.read(MAX_OCSP_REQUEST + 1 - len(body)):
            body += chunk
            if len(body) > MAX_OCSP_REQUEST:
                return _too_big()
        return await _ocsp(paths, bytes(body))

    async def ocsp_get(request: web.Request) -> web.StreamResponse:
        encoded = request.match_info["request"]
        if len(encoded) > MAX_OCSP_REQUEST * 4 // 3 + 4:
            return _too_big()
        try:
            body = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
        except (binascii.Error, ValueError):
            body = b""  # not base64: answered as a malformed request
        return await _ocsp(paths, body)

    return [
        web.get(CRL_PATH, crl),
        web.post(OCSP_PATH, ocsp_post),
        web.get(OCSP_PATH + "/{request:.+}", ocsp_get),
    ]


async def _ocsp(paths: CertPaths, body: bytes) -> web.StreamResponse:
    try:
        answer = await asyncio.to_thread(ocsp_response, paths, body)
    except CertError as e:
        return _missing(paths, e)
    return web.Response(
        body=answer.public_bytes(serialization.Encoding.DER),
        content_type=OCSP_RESPONSE_TYPE,
        headers={"Cache-Control": "no-cache"},
    )


_Status = tuple[ocsp.OCSPCertStatus, datetime | None, x509.ReasonFlags | None]
"""A certificate's status, with its revocation time and reason when it is revoked."""


def ocsp_response(
    paths: CertPaths, request_der: bytes, *, now: datetime | None = None
) -> ocsp.OCSPResponse:
    """The OCSP response to one DER request (see the module docstring); ``CertError`` when the
    directory has no usable CA or CRL."""
    try:
        request = ocsp.load_der_ocsp_request(request_der)
        algorithm = request.hash_algorithm
        name_hash, key_hash = request.issuer_name_hash, request.issuer_key_hash
        serial = request.serial_number
    except (ValueError, NotImplementedError, UnsupportedAlgorithm):  # not DER, several, odd hash
        return ocsp.OCSPResponseBuilder.build_unsuccessful(
            ocsp.OCSPResponseStatus.MALFORMED_REQUEST
        )
    now = now or datetime.now(UTC)
    crl = current_crl(paths.dir, now=now)
    ca_cert, ca_key = signer(load_ca(paths))
    # The request names the issuer by hashes of its name and key: compute ours the same way.
    ours = ocsp.OCSPRequestBuilder().add_certificate(ca_cert, ca_cert, algorithm).build()
    if (name_hash, key_hash) != (ours.issuer_name_hash, ours.issuer_key_hash):
        status: _Status = (ocsp.OCSPCertStatus.UNKNOWN, None, None)
    else:
        status = _status(crl.get_revoked_certificate_by_serial_number(serial))
    this_update = now.replace(microsecond=0)
    builder = (
        ocsp.OCSPResponseBuilder()
        .add_response_by_hash(
            issuer_name_hash=name_hash,
            issuer_key_hash=key_hash,
            serial_number=serial,
            algorithm=algorithm,
            cert_status=status[0],
            this_update=this_update,
            next_update=this_update + OCSP_VALIDITY,
            revocation_time=status[1],
            revocation_reason=status[2],
        )
        .responder_id(ocsp.OCSPResponderEncoding.HASH, ca_cert)
    )
    return _with_nonce(builder, request).sign(ca_key, hashes.SHA256())


def _status(revoked: x509.RevokedCertificate | None) -> _Status:
    """*revoked* (when and why) for a serial the CRL lists, else *good*."""
    if revoked is None:
        return ocsp.OCSPCertStatus.GOOD, None, None
    try:
        reason = revoked.extensions.get_extension_for_class(x509.CRLReason).value.reason
    except x509.ExtensionNotFound:
        reason = None
    return ocsp.OCSPCertStatus.REVOKED, revoked.revocation_date_utc, reason


def _with_nonce(
    builder: ocsp.OCSPResponseBuilder, request: ocsp.OCSPRequest
) -> ocsp.OCSPResponseBuilder:
    """The request's nonce echoed (RFC 8954); an extension cryptography cannot read is
    ignored."""
    try:
        nonce = request.extensions.get_extension_for_class(x509.OCSPNonce)
    except (x509.ExtensionNotFound, ValueError):
        return builder
    return builder.add_extension(nonce.value, critical=False)


def _missing(paths: CertPaths, error: CertError) -> web.Response:
    needed = (paths.ca, paths.ca_key, paths.revoked_cert)
    status = 404 if not all(p.exists() for p in needed) else 500
    return web.json_response({"error": str(error)}, status=status)


def _too_big() -> web.Response:
    return web.json_response(
        {"error": f"an OCSP request is at most {MAX_OCSP_REQUEST} bytes"}, status=413
    )
