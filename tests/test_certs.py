"""emulator/certs/: the files it writes, and real mutual-TLS handshakes over loopback."""

from __future__ import annotations

import argparse
import io
import ipaddress
import os
import ssl
import stat
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiohttp
import pytest
import trustme
from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from pytest_aiohttp import AiohttpServer

from emulator.certs import (
    PLATFORM_CN,
    CertError,
    CertPaths,
    client_ssl_context,
    common_name,
    crl_distribution_points,
    crl_url,
    current_crl,
    ensure_certs,
    issue_client_cert,
    load_certs,
    read_crl,
    server_ssl_context,
)
from emulator.cli.certs import register

TIMEOUT = aiohttp.ClientTimeout(total=10)


def chain(path: Path) -> list[x509.Certificate]:
    return x509.load_pem_x509_certificates(path.read_bytes())


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def snapshot(paths: CertPaths) -> dict[str, bytes]:
    files = [p for pair in paths.pairs() for p in pair]
    return {
        p.name: p.read_bytes() for p in [*files, paths.revoked_cert, paths.revoked_key, paths.crl]
    }


# --- files --------------------------------------------------------------------------------------


def test_writes_the_nine_files_with_private_keys_0600(tmp_path: Path) -> None:
    paths = ensure_certs(tmp_path / "certs")
    names = sorted(p.name for p in paths.dir.iterdir() if not p.name.startswith("."))
    assert names == [
        "bot.key",
        "bot.pem",
        "ca.crl.pem",
        "ca.key",
        "ca.pem",
        "platform-revoked.key",
        "platform-revoked.pem",
        "platform.key",
        "platform.pem",
    ]
    for key in (paths.ca_key, paths.bot_key, paths.client_key, paths.revoked_key):
        assert mode(key) == 0o600, key
    for cert in (paths.ca, paths.bot_cert, paths.client_cert, paths.revoked_cert, paths.crl):
        assert mode(cert) == 0o644, cert


def test_key_files_are_0600_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        paths = ensure_certs(tmp_path)
    finally:
        os.umask(old)
    keys = (paths.ca_key, paths.bot_key, paths.client_key, paths.revoked_key)
    assert {mode(p) for p in keys} == {0o600}


def test_a_kept_key_file_is_tightened_to_0600(tmp_path: Path) -> None:
    paths = ensure_certs(tmp_path)
    paths.bot_key.chmod(0o644)
    ensure_certs(tmp_path)
    assert mode(paths.bot_key) == 0o600


def test_bot_certificate_names_localhost_and_both_loopbacks(tmp_path: Path) -> None:
    paths = ensure_certs(tmp_path)
    leaf, ca = chain(paths.bot_cert)
    san = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["localhost"]
    assert san.get_values_for_type(x509.IPAddress) == [
        ipaddress.ip_address("127.0.0.1"),
        ipaddress.ip_address("::1"),
    ]
    eku = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert ExtendedKeyUsageOID.SERVER_AUTH in eku
    assert ca == x509.load_pem_x509_certificate(paths.ca.read_bytes())
    leaf.verify_directly_issued_by(ca)


@pytest.mark.parametrize(
    ("argument", "expected"),
    [
        pytest.param(None, PLATFORM_CN, id="default"),
        pytest.param("calls.example.org", "calls.example.org", id="host-name"),
        pytest.param("Platform Client", "Platform Client", id="not-a-host-name"),
    ],
)
def test_platform_client_certificate_common_name(
    tmp_path: Path, argument: str | None, expected: str
) -> None:
    paths = (
        ensure_certs(tmp_path) if argument is None else ensure_certs(tmp_path, client_cn=argument)
    )
    leaf, ca = chain(paths.client_cert)
    names = leaf.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    assert [n.value for n in names] == [expected]
    assert common_name(paths.client_cert) == expected
    eku = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert ExtendedKeyUsageOID.CLIENT_AUTH in eku
    leaf.verify_directly_issued_by(ca)


def test_rerun_keeps_the_ca_and_every_certificate(tmp_path: Path) -> None:
    first = snapshot(ensure_certs(tmp_path))
    assert snapshot(ensure_certs(tmp_path, client_cn="other.example.org")) == first


def test_force_replaces_everything(tmp_path: Path) -> None:
    first = snapshot(ensure_certs(tmp_path))
    second = snapshot(ensure_certs(tmp_path, force=True))
    assert all(first[name] != second[name] for name in first)


def test_a_missing_leaf_is_reissued_from_the_kept_ca(tmp_path: Path) -> None:
    paths = ensure_certs(tmp_path)
    first = snapshot(paths)
    paths.client_key.unlink()
    ensure_certs(tmp_path, client_cn="calls.example.org")
    assert paths.ca.read_bytes() == first["ca.pem"]
    assert paths.bot_cert.read_bytes() == first["bot.pem"]
    assert paths.client_cert.read_bytes() != first["platform.pem"]
    leaf, _ = chain(paths.client_cert)
    leaf.verify_directly_issued_by(x509.load_pem_x509_certificate(first["ca.pem"]))
    assert common_name(paths.client_cert) == "calls.example.org"
    # the revoked twin follows the platform certificate's new name, and the CRL its new serial
    assert common_name(paths.revoked_cert) == "calls.example.org"
    assert paths.revoked_cert.read_bytes() != first["platform-revoked.pem"]
    assert listed_serials(paths) == [chain(paths.revoked_cert)[0].serial_number]
    assert crl_number(paths) == 2


def test_concurrent_runs_agree_on_one_ca(tmp_path: Path) -> None:
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda _: ensure_certs(tmp_path), range(8)))
    paths = CertPaths.of(tmp_path)
    ca = x509.load_pem_x509_certificate(paths.ca.read_bytes())
    for cert in (paths.bot_cert, paths.client_cert, paths.revoked_cert):
        leaf, tail = chain(cert)
        assert tail == ca
        leaf.verify_directly_issued_by(ca)
    assert load_ca_key_matches(paths)
    assert read_crl(paths.crl).is_signature_valid(ca.public_key())  # type: ignore[arg-type]
    assert listed_serials(paths) == [chain(paths.revoked_cert)[0].serial_number]


def load_ca_key_matches(paths: CertPaths) -> bool:
    key = serialization.load_pem_private_key(paths.ca_key.read_bytes(), password=None)
    return key.public_key() == chain(paths.ca)[0].public_key()


def test_a_ca_key_that_does_not_match_is_an_error(tmp_path: Path) -> None:
    paths = ensure_certs(tmp_path)
    paths.ca_key.write_bytes(trustme.CA().private_key_pem.bytes())
    with pytest.raises(CertError, match=r"does not belong to ca\.pem") as info:
        ensure_certs(tmp_path)
    assert info.value.path == paths.ca_key


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda p: p.ca_key.unlink(), id="ca-key-missing"),
        pytest.param(lambda p: p.ca.write_text("not a certificate"), id="ca-garbage"),
        pytest.param(lambda p: p.bot_cert.write_text("junk"), id="bot-garbage"),
    ],
)
def test_damaged_directory_is_a_cert_error(tmp_path: Path, damage: object) -> None:
    paths = ensure_certs(tmp_path)
    damage(paths)  # type: ignore[operator]
    with pytest.raises(CertError):
        ensure_certs(tmp_path)
    ensure_certs(tmp_path, force=True)  # --force always recovers
    load_certs(tmp_path)


def test_a_file_in_place_of_the_directory_is_a_cert_error(tmp_path: Path) -> None:
    (tmp_path / "certs").write_text("")
    with pytest.raises(CertError, match="not a directory"):
        ensure_certs(tmp_path / "certs")


def test_load_certs_names_the_missing_file(tmp_path: Path) -> None:
    paths = ensure_certs(tmp_path)
    paths.bot_key.unlink()
    with pytest.raises(CertError, match="missing") as info:
        load_certs(tmp_path)
    assert info.value.path == paths.bot_key


def test_issue_client_cert_from_the_persisted_or_an_unknown_ca(tmp_path: Path) -> None:
    paths = ensure_certs(tmp_path)
    ca = x509.load_pem_x509_certificate(paths.ca.read_bytes())
    start = datetime(2020, 1, 1, tzinfo=UTC)
    end = start + timedelta(days=1)
    pem, key = issue_client_cert(paths, common_name="x.example", not_before=start, not_after=end)
    leaf, tail = x509.load_pem_x509_certificates(pem)
    assert (leaf.not_valid_before_utc, leaf.not_valid_after_utc) == (start, end)
    assert tail == ca
    leaf.verify_directly_issued_by(ca)
    assert key.startswith(b"-----BEGIN EC PRIVATE KEY-----")

    pem, _ = issue_client_cert(
        paths, common_name="x.example", not_before=start, not_after=end, ca="unknown"
    )
    stranger, stranger_ca = x509.load_pem_x509_certificates(pem)
    assert stranger_ca != ca
    with pytest.raises(ValueError):  # the signature check: cryptography raises InvalidSignature
        stranger.verify_directly_issued_by(ca)


def test_an_unusable_common_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CertError, match="common name"):
        ensure_certs(tmp_path, client_cn="")


# --- revocation: the CRL, the revoked certificate, distribution points -------------------------


def listed_serials(paths: CertPaths) -> list[int]:
    return [entry.serial_number for entry in read_crl(paths.crl)]


def crl_number(paths: CertPaths) -> int:
    return read_crl(paths.crl).extensions.get_extension_for_class(x509.CRLNumber).value.crl_number


def test_the_crl_is_a_v2_crl_signed_by_the_ca_listing_only_the_revoked_certificate(
    tmp_path: Path,
) -> None:
    paths = ensure_certs(tmp_path)
    ca = chain(paths.ca)[0]
    pem = paths.crl.read_bytes()
    assert pem.startswith(b"-----BEGIN X509 CRL-----")
    crl = read_crl(paths.crl)
    assert crl.issuer == ca.subject
    assert crl.is_signature_valid(ca.public_key())  # type: ignore[arg-type]
    assert crl.next_update_utc is not None
    assert crl.next_update_utc - crl.last_update_utc == timedelta(days=30)
    assert abs(crl.last_update_utc - datetime.now(UTC)) < timedelta(minutes=10)
    assert crl_number(paths) == 1
    aki = crl.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier).value
    ski = ca.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    assert aki.key_identifier == ski.digest
    # the DER's TBSCertList starts with version INTEGER 1 (v2): SEQUENCE, SEQUENCE, 02 01 01
    der = crl.public_bytes(serialization.Encoding.DER)
    assert b"\x02\x01\x01" in der[:12]

    revoked, _ = chain(paths.revoked_cert)
    platform, _ = chain(paths.client_cert)
    bot, _ = chain(paths.bot_cert)
    assert listed_serials(paths) == [revoked.serial_number]
    entry = crl.get_revoked_certificate_by_serial_number(revoked.serial_number)
    assert entry is not None
    reason = entry.extensions.get_extension_for_class(x509.CRLReason).value.reason
    assert reason is x509.ReasonFlags.key_compromise
    for good in (platform, bot):
        assert crl.get_revoked_certificate_by_serial_number(good.serial_number) is None


def test_the_revoked_certificate_is_the_platform_certificate_but_for_revocation(
    tmp_path: Path,
) -> None:
    paths = ensure_certs(tmp_path)
    revoked, tail = chain(paths.revoked_cert)
    platform, _ = chain(paths.client_cert)
    assert tail == chain(paths.ca)[0]
    revoked.verify_directly_issued_by(tail)
    assert common_name(paths.revoked_cert) == common_name(paths.client_cert) == PLATFORM_CN
    assert (revoked.not_valid_before_utc, revoked.not_valid_after_utc) == (
        platform.not_valid_before_utc,
        platform.not_valid_after_utc,
    )
    assert revoked.not_valid_before_utc < datetime.now(UTC) < revoked.not_valid_after_utc
    assert revoked.serial_number != platform.serial_number
    eku = revoked.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert ExtendedKeyUsageOID.CLIENT_AUTH in eku
    key = serialization.load_pem_private_key(paths.revoked_key.read_bytes(), password=None)
    assert key.public_key() == revoked.public_key()


def test_botemu_certificates_name_the_crl_distribution_point(tmp_path: Path) -> None:
    paths = ensure_certs(tmp_path)
    url = "http://127.0.0.1:9070/_botemu/pki/crl"
    for cert in (paths.bot_cert, paths.client_cert, paths.revoked_cert):
        assert crl_distribution_points(cert) == [url], cert
        ext = chain(cert)[0].extensions.get_extension_for_class(x509.CRLDistributionPoints)
        assert not ext.critical
    assert crl_distribution_points(paths.ca) == []  # the root names none

    now = datetime.now(UTC)
    start, end = now - timedelta(days=1), now + timedelta(days=1)
    probe = tmp_path / "probe.pem"
    for ca, expected in (("botemu", [url]), ("unknown", [])):  # no botemu CRL for another CA
        pem, _ = issue_client_cert(
            paths,
            common_name="x.example",
            not_before=start,
            not_after=end,
            ca=ca,  # type: ignore[arg-type]
        )
        probe.write_bytes(pem)
        assert crl_distribution_points(probe) == expected, ca


def test_the_distribution_point_follows_base_url(tmp_path: Path) -> None:
    paths = ensure_certs(tmp_path, base_url="http://localhost:9999/")
    assert crl_url("http://localhost:9999/") == "http://localhost:9999/_botemu/pki/crl"
    for cert in (paths.bot_cert, paths.client_cert, paths.revoked_cert):
        assert crl_distribution_points(cert) == ["http://localhost:9999/_botemu/pki/crl"]
    now = datetime.now(UTC)
    pem, _ = issue_client_cert(
        paths, common_name="x.example", not_before=now, not_after=now + timedelta(days=1)
    )
    probe = tmp_path / "probe.pem"
    probe.write_bytes(pem)
    assert crl_distribution_points(probe) == ["http://localhost:9999/_botemu/pki/crl"]


def test_an_old_directory_gets_the_crl_and_the_revoked_certificate(tmp_path: Path) -> None:
    paths = ensure_certs(tmp_path)
    for path in (paths.crl, paths.revoked_cert, paths.revoked_key):
        path.unlink()
    old = snapshot_of((paths.ca, paths.ca_key, paths.bot_cert, paths.client_cert))
    ensure_certs(tmp_path)
    assert snapshot_of(old) == old  # the CA and the leaves are kept
    ca = chain(paths.ca)[0]
    chain(paths.revoked_cert)[0].verify_directly_issued_by(ca)
    assert read_crl(paths.crl).is_signature_valid(ca.public_key())  # type: ignore[arg-type]
    assert listed_serials(paths) == [chain(paths.revoked_cert)[0].serial_number]
    assert mode(paths.revoked_key) == 0o600
    load_certs(tmp_path)


def snapshot_of(files: Iterable[Path]) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in files}


@pytest.mark.parametrize("damage", ["missing", "garbage", "another-ca"])
def test_a_missing_or_foreign_crl_is_written_anew(tmp_path: Path, damage: str) -> None:
    paths = ensure_certs(tmp_path / "certs")
    kept = snapshot_of((paths.ca, paths.revoked_cert))
    if damage == "missing":
        paths.crl.unlink()
    elif damage == "garbage":
        paths.crl.write_text("junk")
    else:
        paths.crl.write_bytes(ensure_certs(tmp_path / "other").crl.read_bytes())
    ensure_certs(paths.dir)
    assert snapshot_of(kept) == kept
    assert crl_number(paths) == 1
    ca = chain(paths.ca)[0]
    assert read_crl(paths.crl).is_signature_valid(ca.public_key())  # type: ignore[arg-type]
    assert listed_serials(paths) == [chain(paths.revoked_cert)[0].serial_number]


def test_the_crl_is_renewed_when_under_seven_days_are_left(tmp_path: Path) -> None:
    paths = ensure_certs(tmp_path)
    first = paths.crl.read_bytes()
    now = datetime.now(UTC)
    # 8 days left: kept as it is
    assert current_crl(tmp_path, now=now + timedelta(days=22)) == read_crl(paths.crl)
    assert paths.crl.read_bytes() == first
    # 6 days left: renewed, numbered on, the same certificate still listed
    renewed = current_crl(tmp_path, now=now + timedelta(days=24))
    assert paths.crl.read_bytes() != first
    assert renewed == read_crl(paths.crl)
    assert crl_number(paths) == 2
    assert renewed.next_update_utc is not None
    assert renewed.next_update_utc > now + timedelta(days=50)
    assert listed_serials(paths) == [chain(paths.revoked_cert)[0].serial_number]
    old_entry = x509.load_pem_x509_crl(first).get_revoked_certificate_by_serial_number(
        listed_serials(paths)[0]
    )
    new_entry = renewed.get_revoked_certificate_by_serial_number(listed_serials(paths)[0])
    assert old_entry is not None and new_entry is not None
    assert new_entry.revocation_date_utc == old_entry.revocation_date_utc  # revoked once


def test_ensure_certs_renews_a_crl_near_its_next_update(tmp_path: Path) -> None:
    paths = ensure_certs(tmp_path)
    now = datetime.now(UTC)
    # a CRL made 25 days ago: 5 days left
    stale = current_crl(tmp_path, now=now - timedelta(days=25))
    assert stale.next_update_utc is not None
    assert stale.next_update_utc - now < timedelta(days=7)
    ensure_certs(tmp_path)
    fresh = read_crl(paths.crl)
    assert fresh.next_update_utc is not None
    assert fresh.next_update_utc - now > timedelta(days=29)
    assert crl_number(paths) == 3


def test_current_crl_needs_the_ca_and_the_revoked_certificate(tmp_path: Path) -> None:
    with pytest.raises(CertError, match="no such directory"):
        current_crl(tmp_path / "none")
    paths = ensure_certs(tmp_path)
    paths.revoked_cert.unlink()
    with pytest.raises(CertError, match="missing") as info:
        current_crl(tmp_path)
    assert info.value.path == paths.revoked_cert
    paths.ca_key.unlink()
    with pytest.raises(CertError) as info:
        current_crl(tmp_path)
    assert info.value.path == paths.ca_key


# --- real handshakes ----------------------------------------------------------------------------


async def peer_cn(request: web.Request) -> web.Response:
    cert = request.get_extra_info("peercert") or {}
    cn = [value for rdn in cert.get("subject", ()) for key, value in rdn if key == "commonName"]
    return web.json_response({"cn": cn})


async def mtls_bot(aiohttp_server: AiohttpServer, paths: CertPaths) -> str:
    app = web.Application()
    app.router.add_post("/api/calls", peer_cn)
    server = await aiohttp_server(app, ssl=server_ssl_context(paths))
    return f"https://127.0.0.1:{server.port}/api/calls"


async def test_mutual_tls_handshake_with_the_platform_certificate(
    tmp_path: Path, aiohttp_server: AiohttpServer
) -> None:
    paths = ensure_certs(tmp_path, client_cn="calls.example.org")
    url = await mtls_bot(aiohttp_server, paths)
    async with (
        aiohttp.ClientSession(timeout=TIMEOUT) as session,
        session.post(url, ssl=client_ssl_context(paths)) as response,
    ):
        assert response.status == 200
        assert await response.json() == {"cn": ["calls.example.org"]}


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1"])
async def test_the_bot_certificate_verifies_by_name_and_address(
    tmp_path: Path, aiohttp_server: AiohttpServer, host: str
) -> None:
    paths = ensure_certs(tmp_path)
    url = (await mtls_bot(aiohttp_server, paths)).replace("127.0.0.1", host)
    async with (
        aiohttp.ClientSession(timeout=TIMEOUT) as session,
        session.post(url, ssl=client_ssl_context(paths)) as response,
    ):
        assert response.status == 200


async def test_handshake_fails_when_the_bot_is_not_from_the_trusted_ca(
    tmp_path: Path, aiohttp_server: AiohttpServer
) -> None:
    paths = ensure_certs(tmp_path / "certs")
    url = await mtls_bot(aiohttp_server, paths)
    other = tmp_path / "other-ca.pem"
    trustme.CA().cert_pem.write_to_path(str(other))
    async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
        with pytest.raises(aiohttp.ClientConnectorCertificateError) as info:
            await session.post(url, ssl=client_ssl_context(paths, ca_file=other))
    assert isinstance(info.value.certificate_error, ssl.SSLCertVerificationError)
    assert "self-signed certificate in certificate chain" in str(info.value.certificate_error)


async def test_handshake_fails_for_a_name_the_bot_certificate_lacks(
    tmp_path: Path, aiohttp_server: AiohttpServer
) -> None:
    paths = ensure_certs(tmp_path)
    url = await mtls_bot(aiohttp_server, paths)
    async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
        with pytest.raises(aiohttp.ClientConnectorCertificateError, match="mismatch"):
            await session.post(url, ssl=client_ssl_context(paths), server_hostname="bot.example")


async def test_the_bot_context_refuses_the_revoked_certificate_unless_told_not_to_check(
    tmp_path: Path, aiohttp_server: AiohttpServer
) -> None:
    paths = ensure_certs(tmp_path)
    revoked = ssl.create_default_context(cafile=str(paths.ca))
    revoked.load_cert_chain(str(paths.revoked_cert), str(paths.revoked_key))
    checking = await mtls_bot(aiohttp_server, paths)
    async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
        async with session.post(checking, ssl=client_ssl_context(paths)) as response:
            assert response.status == 200  # the platform's own certificate is not revoked
        with pytest.raises(aiohttp.ClientConnectionError):
            await session.post(checking, ssl=revoked)

    app = web.Application()
    app.router.add_post("/", peer_cn)
    lax = server_ssl_context(paths, check_revocation=False)
    server = await aiohttp_server(app, ssl=lax)
    async with (
        aiohttp.ClientSession(timeout=TIMEOUT) as session,
        session.post(f"https://127.0.0.1:{server.port}/", ssl=revoked) as response,
    ):
        assert await response.json() == {"cn": [PLATFORM_CN]}


def test_a_bot_context_without_the_crl_is_a_cert_error(tmp_path: Path) -> None:
    paths = ensure_certs(tmp_path)
    paths.crl.unlink()
    with pytest.raises(CertError, match="missing") as info:
        server_ssl_context(paths)
    assert info.value.path == paths.crl
    server_ssl_context(paths, check_revocation=False)
    paths.crl.write_text("not a CRL")
    with pytest.raises(CertError, match="not a PEM CRL"):
        server_ssl_context(paths)


async def test_the_bot_context_refuses_a_client_without_a_certificate(
    tmp_path: Path, aiohttp_server: AiohttpServer
) -> None:
    paths = ensure_certs(tmp_path)
    url = await mtls_bot(aiohttp_server, paths)
    anonymous = ssl.create_default_context(cafile=str(paths.ca))
    async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
        with pytest.raises(aiohttp.ClientConnectionError):
            await session.post(url, ssl=anonymous)


async def test_optional_client_certificate_still_refuses_a_bad_one(
    tmp_path: Path, aiohttp_server: AiohttpServer
) -> None:
    paths = ensure_certs(tmp_path)
    app = web.Application()
    app.router.add_post("/", peer_cn)
    server = await aiohttp_server(app, ssl=server_ssl_context(paths, require_client_cert=False))
    url = f"https://127.0.0.1:{server.port}/"
    anonymous = ssl.create_default_context(cafile=str(paths.ca))
    stranger = tmp_path / "stranger.pem"
    now = datetime.now(UTC)
    pem, key = issue_client_cert(
        paths,
        common_name=PLATFORM_CN,
        not_before=now - timedelta(days=1),
        not_after=now + timedelta(days=1),
        ca="unknown",
    )
    stranger.write_bytes(key + pem)
    presenting = ssl.create_default_context(cafile=str(paths.ca))
    presenting.load_cert_chain(str(stranger))
    async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
        async with session.post(url, ssl=anonymous) as response:
            assert await response.json() == {"cn": []}
        with pytest.raises(aiohttp.ClientConnectionError):
            await session.post(url, ssl=presenting)


# --- botemu certs -------------------------------------------------------------------------------


def run_certs(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="botemu")
    register(parser.add_subparsers())
    args = parser.parse_args(["certs", *argv])
    out = io.StringIO()
    code: int = args.handler(args, out)
    return code, out.getvalue(), capsys.readouterr().err


def test_cli_certs_writes_then_keeps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = tmp_path / "certs"
    code, out, err = run_certs(["--dir", str(d)], capsys)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert len(lines) == 10
    assert lines[0].split()[:3] == [str(d / "ca.pem"), "written", "CA"]
    assert "CN platform.botemu.local" in lines[4]
    assert lines[6].split()[:2] == [str(d / "ca.crl.pem"), "written"]
    assert "revoked platform client certificate" in lines[7]

    code, out, _ = run_certs(["--dir", str(d)], capsys)
    assert code == 0
    assert [line.split()[1] for line in out.splitlines()[:9]] == ["kept"] * 9


def test_cli_certs_client_cn_and_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = tmp_path / "certs"
    code, out, _ = run_certs(["--dir", str(d), "--client-cn", "calls.example.org"], capsys)
    assert code == 0
    assert "CN calls.example.org" in out
    ca = (d / "ca.pem").read_bytes()

    code, out, err = run_certs(["--dir", str(d), "--client-cn", "other.example.org"], capsys)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert "issued for CN 'calls.example.org', not 'other.example.org'" in err
    assert "--force" in err

    code, out, _ = run_certs(
        ["--dir", str(d), "--client-cn", "other.example.org", "--force"], capsys
    )
    assert code == 0
    assert "CN other.example.org" in out
    assert (d / "ca.pem").read_bytes() != ca


def test_cli_certs_error_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("")
    code, out, err = run_certs(["--dir", str(tmp_path / "file")], capsys)
    assert (code, out) == (2, "")
    assert err == f"botemu certs: {tmp_path / 'file'}: exists and is not a directory\n"
