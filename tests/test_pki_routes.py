"""emulator/pki_routes.py: the CRL and OCSP routes, on an aiohttp test app of their own."""

from __future__ import annotations

import base64
import os
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509 import ocsp

from emulator.certs import CertPaths, current_crl, ensure_certs, read_crl
from emulator.pki_routes import MAX_OCSP_REQUEST, pki_routes

Client = TestClient[web.Request, web.Application]
ClientFactory = Callable[..., Awaitable[Client]]


def cert(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificates(path.read_bytes())[0]


@pytest.fixture
def paths(tmp_path: Path) -> CertPaths:
    return ensure_certs(tmp_path / "certs")


async def client_for(aiohttp_client: ClientFactory, certs_dir: Path) -> Client:
    app = web.Application()
    app.add_routes(pki_routes(certs_dir))
    return await aiohttp_client(app)


# --- GET /_botemu/pki/crl -----------------------------------------------------------------------


async def test_the_crl_is_served_in_der(paths: CertPaths, aiohttp_client: ClientFactory) -> None:
    client = await client_for(aiohttp_client, paths.dir)
    response = await client.get("/_botemu/pki/crl")
    assert response.status == 200
    assert response.headers["Content-Type"] == "application/pkix-crl"
    crl = x509.load_der_x509_crl(await response.read())
    assert crl == read_crl(paths.crl)
    assert crl.is_signature_valid(cert(paths.ca).public_key())  # type: ignore[arg-type]
    assert crl.get_revoked_certificate_by_serial_number(cert(paths.revoked_cert).serial_number)
    head = await client.head("/_botemu/pki/crl")
    assert head.status == 200


async def test_the_route_is_the_certificates_distribution_point(
    paths: CertPaths, aiohttp_client: ClientFactory
) -> None:
    client = await client_for(aiohttp_client, paths.dir)
    point = cert(paths.client_cert).extensions.get_extension_for_class(x509.CRLDistributionPoints)
    (uri,) = point.value[0].full_name or []
    path = "/" + str(uri.value).split("/", 3)[3]
    assert path == "/_botemu/pki/crl"
    response = await client.get(path)
    assert response.status == 200


async def test_a_stale_crl_is_renewed_before_it_is_served(
    paths: CertPaths, aiohttp_client: ClientFactory
) -> None:
    current_crl(paths.dir, now=datetime.now(UTC) - timedelta(days=25))  # 5 days left
    client = await client_for(aiohttp_client, paths.dir)
    response = await client.get("/_botemu/pki/crl")
    crl = x509.load_der_x509_crl(await response.read())
    assert crl.next_update_utc is not None
    assert crl.next_update_utc - datetime.now(UTC) > timedelta(days=29)
    assert crl.extensions.get_extension_for_class(x509.CRLNumber).value.crl_number == 3
    assert read_crl(paths.crl) == crl  # written back


async def test_without_certificates_the_routes_answer_404(
    tmp_path: Path, aiohttp_client: ClientFactory
) -> None:
    client = await client_for(aiohttp_client, tmp_path / "none")
    response = await client.get("/_botemu/pki/crl")
    assert response.status == 404
    assert "run 'botemu certs'" in (await response.json())["error"]
    paths = ensure_certs(tmp_path / "old")
    paths.revoked_cert.unlink()
    client = await client_for(aiohttp_client, paths.dir)
    response = await client.post("/_botemu/pki/ocsp", data=request_for(paths, paths.client_cert))
    assert response.status == 404
    assert "platform-revoked.pem" in (await response.json())["error"]


# --- OCSP ---------------------------------------------------------------------------------------


def request_for(
    paths: CertPaths, cert_file: Path, *, algorithm: Any = None, nonce: bytes | None = None
) -> bytes:
    issued, issuer = x509.load_pem_x509_certificates(cert_file.read_bytes())[:2]
    builder = ocsp.OCSPRequestBuilder().add_certificate(
        issued, issuer, algorithm or hashes.SHA256()
    )
    if nonce is not None:
        builder = builder.add_extension(x509.OCSPNonce(nonce), critical=False)
    return builder.build().public_bytes(serialization.Encoding.DER)


async def post(client: Client, body: bytes) -> ocsp.OCSPResponse:
    response = await client.post(
        "/_botemu/pki/ocsp", data=body, headers={"Content-Type": "application/ocsp-request"}
    )
    assert response.status == 200
    assert response.headers["Content-Type"] == "application/ocsp-response"
    return ocsp.load_der_ocsp_response(await response.read())


def check_signed_by_the_ca(answer: ocsp.OCSPResponse, paths: CertPaths) -> None:
    ca = cert(paths.ca)
    key = ca.public_key()
    assert isinstance(key, ec.EllipticCurvePublicKey)
    key.verify(answer.signature, answer.tbs_response_bytes, ec.ECDSA(hashes.SHA256()))
    assert answer.responder_key_hash == x509.SubjectKeyIdentifier.from_public_key(key).digest


@pytest.mark.parametrize(
    ("which", "status"),
    [
        pytest.param("revoked", ocsp.OCSPCertStatus.REVOKED, id="revoked"),
        pytest.param("platform", ocsp.OCSPCertStatus.GOOD, id="good-platform"),
        pytest.param("bot", ocsp.OCSPCertStatus.GOOD, id="good-bot"),
        pytest.param("stranger", ocsp.OCSPCertStatus.UNKNOWN, id="unknown-issuer"),
    ],
)
async def test_ocsp_answers_good_revoked_or_unknown(
    paths: CertPaths,
    tmp_path: Path,
    aiohttp_client: ClientFactory,
    which: str,
    status: ocsp.OCSPCertStatus,
) -> None:
    files = {"revoked": paths.revoked_cert, "platform": paths.client_cert, "bot": paths.bot_cert}
    asked = files.get(which) or ensure_certs(tmp_path / "stranger").client_cert
    client = await client_for(aiohttp_client, paths.dir)
    answer = await post(client, request_for(paths, asked))
    assert answer.response_status is ocsp.OCSPResponseStatus.SUCCESSFUL
    assert answer.certificate_status is status
    assert answer.serial_number == cert(asked).serial_number
    assert answer.next_update_utc is not None
    assert answer.this_update_utc < answer.next_update_utc
    check_signed_by_the_ca(answer, paths)
    if status is ocsp.OCSPCertStatus.REVOKED:
        entry = read_crl(paths.crl).get_revoked_certificate_by_serial_number(answer.serial_number)
        assert entry is not None
        assert answer.revocation_time_utc == entry.revocation_date_utc
        assert answer.revocation_reason is x509.ReasonFlags.key_compromise
    else:
        assert answer.revocation_time_utc is None


async def test_ocsp_by_get_with_the_request_in_the_path(
    paths: CertPaths, aiohttp_client: ClientFactory
) -> None:
    client = await client_for(aiohttp_client, paths.dir)
    encoded = base64.b64encode(request_for(paths, paths.revoked_cert, algorithm=hashes.SHA1()))
    response = await client.get(f"/_botemu/pki/ocsp/{encoded.decode()}")
    assert response.status == 200
    assert response.headers["Content-Type"] == "application/ocsp-response"
    answer = ocsp.load_der_ocsp_response(await response.read())
    assert answer.certificate_status is ocsp.OCSPCertStatus.REVOKED
    assert isinstance(answer.hash_algorithm, hashes.SHA1)


async def test_ocsp_echoes_the_nonce(paths: CertPaths, aiohttp_client: ClientFactory) -> None:
    client = await client_for(aiohttp_client, paths.dir)
    nonce = os.urandom(16)
    answer = await post(client, request_for(paths, paths.client_cert, nonce=nonce))
    echoed = answer.extensions.get_extension_for_class(x509.OCSPNonce).value
    assert echoed.nonce == nonce


@pytest.mark.parametrize(
    ("method", "body"),
    [
        pytest.param("post", b"", id="post-empty"),
        pytest.param("post", b"not an ocsp request", id="post-garbage"),
        pytest.param("get", b"", id="get-not-base64"),
    ],
)
async def test_a_malformed_ocsp_request_gets_malformed_request(
    paths: CertPaths, aiohttp_client: ClientFactory, method: str, body: bytes
) -> None:
    client = await client_for(aiohttp_client, paths.dir)
    if method == "post":
        response = await client.post("/_botemu/pki/ocsp", data=body)
    else:
        response = await client.get("/_botemu/pki/ocsp/%%%not-base64!")
    assert response.status == 200
    assert response.headers["Content-Type"] == "application/ocsp-response"
    answer = ocsp.load_der_ocsp_response(await response.read())
    assert answer.response_status is ocsp.OCSPResponseStatus.MALFORMED_REQUEST


async def test_an_ocsp_request_over_64_kib_is_refused(
    paths: CertPaths, aiohttp_client: ClientFactory
) -> None:
    client = await client_for(aiohttp_client, paths.dir)
    response = await client.post("/_botemu/pki/ocsp", data=b"\0" * (MAX_OCSP_REQUEST + 1))
    assert response.status == 413
    assert "65536 bytes" in (await response.json())["error"]

    async def chunks() -> Any:  # no Content-Length: the bound holds while reading
        for _ in range(5):
            yield b"\0" * (MAX_OCSP_REQUEST // 4)

    response = await client.post("/_botemu/pki/ocsp", data=chunks())
    assert response.status == 413
