"""Signing keys: made on first use, persisted, published as a JWKS, rotated with a grace period."""

from __future__ import annotations

import base64
import hashlib
import json
import stat
from pathlib import Path

import jwt
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from emulator.identity.keys import IdentityError, KeyStore
from emulator.jsonutil import JSON

T0 = 1_750_000_000.0
GRACE = 3600.0


class FakeClock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(tmp_path: Path, clock: FakeClock) -> KeyStore:
    return KeyStore(tmp_path / "certs", clock=clock, grace_seconds=GRACE)


def keys_dir(tmp_path: Path) -> Path:
    return tmp_path / "certs" / "signing-keys"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def index(tmp_path: Path) -> list[dict[str, object]]:
    entries = json.loads((keys_dir(tmp_path) / "index.json").read_text())["keys"]
    assert isinstance(entries, list)
    return entries


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# --- generation and persistence -----------------------------------------------------------------


def test_nothing_is_written_before_first_use(tmp_path: Path, store: KeyStore) -> None:
    assert not (tmp_path / "certs").exists()


def test_a_key_is_generated_on_first_use(tmp_path: Path, store: KeyStore) -> None:
    key = store.current()

    assert key.retired is None
    assert key.created == T0
    assert key.private_key.key_size == 2048
    assert (keys_dir(tmp_path) / f"{key.kid}.key").is_file()
    assert (keys_dir(tmp_path) / f"{key.kid}.pem").is_file()
    assert index(tmp_path) == [{"kid": key.kid, "created": T0, "retired": None}]
    assert store.current() is key  # the same key from then on


def test_the_kid_is_the_certificate_thumbprint(store: KeyStore) -> None:
    key = store.current()
    assert key.kid == key.x5t


def test_a_second_store_on_the_same_directory_loads_the_same_key(
    tmp_path: Path, store: KeyStore, clock: FakeClock
) -> None:
    first = store.current()
    again = KeyStore(tmp_path / "certs", clock=clock, grace_seconds=GRACE).current()

    assert again.kid == first.kid
    assert again.created == first.created
    assert again.public_key.public_numbers() == first.public_key.public_numbers()


def test_the_files_on_disk_are_the_key_and_its_certificate(tmp_path: Path, store: KeyStore) -> None:
    key = store.current()
    pem = (keys_dir(tmp_path) / f"{key.kid}.key").read_bytes()
    cert = x509.load_pem_x509_certificate((keys_dir(tmp_path) / f"{key.kid}.pem").read_bytes())

    loaded = serialization.load_pem_private_key(pem, password=None)
    assert loaded.public_key() == key.public_key
    assert cert == key.certificate


def test_modes_key_0600_directory_0700(tmp_path: Path, store: KeyStore) -> None:
    key = store.current()

    assert mode(keys_dir(tmp_path)) == 0o700
    assert mode(keys_dir(tmp_path) / f"{key.kid}.key") == 0o600
    assert mode(keys_dir(tmp_path) / f"{key.kid}.pem") == 0o644


def test_loading_tightens_a_loose_key_file_and_directory(
    tmp_path: Path, store: KeyStore, clock: FakeClock
) -> None:
    key = store.current()
    (keys_dir(tmp_path) / f"{key.kid}.key").chmod(0o644)
    keys_dir(tmp_path).chmod(0o755)

    KeyStore(tmp_path / "certs", clock=clock).current()

    assert mode(keys_dir(tmp_path) / f"{key.kid}.key") == 0o600
    assert mode(keys_dir(tmp_path)) == 0o700


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        pytest.param("{not json", "not JSON", id="not-json"),
        pytest.param('{"keys": 3}', '{"keys": [...]}', id="keys-not-a-list"),
        pytest.param(
            '{"keys": [{"kid": "a/../b", "created": 1}]}', "keys[0]", id="kid-with-a-path"
        ),
        pytest.param(
            '{"keys": [{"kid": "a", "created": "x"}]}', "keys[0]", id="created-not-a-number"
        ),
        pytest.param(
            '{"keys": [{"kid": "a", "created": 1}]}', "a.key: missing", id="missing-key-file"
        ),
    ],
)
def test_a_broken_directory_is_one_identity_error(
    tmp_path: Path, clock: FakeClock, text: str, fragment: str
) -> None:
    keys_dir(tmp_path).mkdir(parents=True)
    (keys_dir(tmp_path) / "index.json").write_text(text)

    with pytest.raises(IdentityError) as caught:
        KeyStore(tmp_path / "certs", clock=clock).current()

    assert fragment in str(caught.value)
    assert "\n" not in str(caught.value)
    assert caught.value.path is not None


def test_a_key_file_that_does_not_match_its_certificate_is_refused(
    tmp_path: Path, clock: FakeClock
) -> None:
    first = KeyStore(tmp_path / "one", clock=clock).current()
    other = KeyStore(tmp_path / "two", clock=clock).current()
    one = tmp_path / "one" / "signing-keys"
    (one / f"{first.kid}.key").write_bytes(
        (tmp_path / "two" / "signing-keys" / f"{other.kid}.key").read_bytes()
    )

    with pytest.raises(IdentityError, match="does not belong"):
        KeyStore(tmp_path / "one", clock=clock).current()


def test_a_certs_dir_that_is_a_file_is_an_identity_error(tmp_path: Path, clock: FakeClock) -> None:
    (tmp_path / "certs").write_text("")

    with pytest.raises(IdentityError) as caught:
        KeyStore(tmp_path / "certs", clock=clock).current()

    assert caught.value.path is not None


# --- the JWK ------------------------------------------------------------------------------------


def test_jwk_members(store: KeyStore) -> None:
    key = store.current()
    jwk = key.jwk()

    assert list(jwk) == ["kty", "use", "alg", "kid", "x5t", "n", "e", "x5c"]
    assert (jwk["kty"], jwk["use"], jwk["alg"], jwk["kid"]) == ("RSA", "sig", "RS256", key.kid)


def test_jwk_x5t_is_the_sha1_of_the_x5c_certificate_without_padding(store: KeyStore) -> None:
    jwk = store.current().jwk()
    x5c = jwk["x5c"]
    assert isinstance(x5c, list) and len(x5c) == 1 and isinstance(x5c[0], str)
    der = base64.b64decode(x5c[0], validate=True)  # standard base64, with padding

    assert jwk["x5t"] == base64.urlsafe_b64encode(hashlib.sha1(der).digest()).decode().rstrip("=")
    assert isinstance(jwk["x5t"], str) and "=" not in jwk["x5t"]


def test_jwk_n_and_e_are_the_key(store: KeyStore) -> None:
    key = store.current()
    jwk = key.jwk()
    numbers = key.public_key.public_numbers()
    assert isinstance(jwk["n"], str) and isinstance(jwk["e"], str)

    assert int.from_bytes(b64url_decode(jwk["n"]), "big") == numbers.n
    assert int.from_bytes(b64url_decode(jwk["e"]), "big") == numbers.e == 65537
    assert jwk["e"] == "AQAB"
    assert "=" not in jwk["n"]


def test_jwk_x5c_is_a_self_signed_certificate_for_the_key(store: KeyStore) -> None:
    key = store.current()
    x5c = key.jwk()["x5c"]
    assert isinstance(x5c, list) and isinstance(x5c[0], str)
    cert = x509.load_der_x509_certificate(base64.b64decode(x5c[0]))

    cert.verify_directly_issued_by(cert)  # raises if the signature does not verify
    assert cert.public_key() == key.public_key
    assert cert.not_valid_before_utc.timestamp() <= T0 < cert.not_valid_after_utc.timestamp()


def test_pyjwt_reads_the_jwk_as_the_same_key(store: KeyStore) -> None:
    key = store.current()
    read = jwt.PyJWK(key.jwk())

    assert read.key_id == key.kid
    assert read.key.public_numbers() == key.public_key.public_numbers()


def test_endorsements_are_absent_by_default(store: KeyStore) -> None:
    assert "endorsements" not in store.current().jwk()
    assert store.current().endorsements == ()


def test_endorsements_are_published_when_configured(tmp_path: Path, clock: FakeClock) -> None:
    store = KeyStore(tmp_path, clock=clock, endorsements=["msteams", "emulator"])

    assert store.current().jwk()["endorsements"] == ["msteams", "emulator"]
    assert all(k["endorsements"] == ["msteams", "emulator"] for k in _jwks_keys(store))


def test_endorsements_are_listed_once_each_in_order(tmp_path: Path, clock: FakeClock) -> None:
    store = KeyStore(tmp_path, clock=clock, endorsements=("webchat", "msteams", "webchat"))

    assert store.endorsements == ("webchat", "msteams")
    assert store.current().jwk()["endorsements"] == ["webchat", "msteams"]


@pytest.mark.parametrize(
    ("endorsements", "message"),
    [
        pytest.param(("",), "'' cannot be an endorsed channel id", id="empty"),
        pytest.param(("ms teams",), "'ms teams' cannot be an endorsed channel id", id="space"),
        pytest.param((" msteams",), "' msteams' cannot be an endorsed channel id", id="padded"),
        pytest.param("msteams", "a list of channel ids, not 'msteams'", id="string"),
        pytest.param(("msteams", 3), "3 cannot be an endorsed channel id", id="number"),
    ],
)
def test_an_endorsement_that_cannot_be_a_channel_id_is_refused(
    tmp_path: Path, endorsements: tuple[str, ...], message: str
) -> None:
    with pytest.raises(IdentityError, match=message):
        KeyStore(tmp_path, endorsements=endorsements)
    assert not (tmp_path / "signing-keys").exists()


def _jwks_keys(store: KeyStore) -> list[dict[str, JSON]]:
    keys = store.jwks()["keys"]
    assert isinstance(keys, list)
    return [k for k in keys if isinstance(k, dict)]


def test_jwks_publishes_the_current_key(store: KeyStore) -> None:
    assert store.jwks() == {"keys": [store.current().jwk()]}


# --- rotation -----------------------------------------------------------------------------------


def test_rotation_makes_a_new_current_key_and_retires_the_old(
    store: KeyStore, clock: FakeClock
) -> None:
    old = store.current()
    clock.now += 100
    new = store.rotate()

    assert new.kid != old.kid
    assert store.current() == new
    assert new.retired is None and new.created == T0 + 100
    assert [(k.kid, k.retired) for k in store.published()] == [
        (new.kid, None),
        (old.kid, T0 + 100),
    ]
    assert [k["kid"] for k in _jwks_keys(store)] == [new.kid, old.kid]


def test_a_retired_key_is_published_until_the_grace_period_ends_then_gone(
    tmp_path: Path, store: KeyStore, clock: FakeClock
) -> None:
    old = store.current()
    clock.now += 100
    new = store.rotate()

    clock.now = T0 + 100 + GRACE - 0.001
    assert store.find(old.kid) is not None
    assert (keys_dir(tmp_path) / f"{old.kid}.key").exists()

    clock.now = T0 + 100 + GRACE
    assert store.find(old.kid) is None
    assert [k.kid for k in store.published()] == [new.kid]
    assert not (keys_dir(tmp_path) / f"{old.kid}.key").exists()
    assert not (keys_dir(tmp_path) / f"{old.kid}.pem").exists()
    assert [e["kid"] for e in index(tmp_path)] == [new.kid]


def test_rotation_is_persisted(tmp_path: Path, store: KeyStore, clock: FakeClock) -> None:
    old = store.current()
    clock.now += 5
    new = store.rotate()

    reloaded = KeyStore(tmp_path / "certs", clock=clock, grace_seconds=GRACE)

    assert reloaded.current().kid == new.kid
    assert [(k.kid, k.retired) for k in reloaded.published()] == [
        (new.kid, None),
        (old.kid, T0 + 5),
    ]


def test_a_store_loaded_after_the_grace_period_drops_the_old_key(
    tmp_path: Path, store: KeyStore, clock: FakeClock
) -> None:
    old = store.current()
    new = store.rotate()
    clock.now += GRACE

    reloaded = KeyStore(tmp_path / "certs", clock=clock, grace_seconds=GRACE)

    assert [k.kid for k in reloaded.published()] == [new.kid]
    assert not (keys_dir(tmp_path) / f"{old.kid}.key").exists()


def test_each_rotation_keeps_every_key_within_grace_newest_first(
    store: KeyStore, clock: FakeClock
) -> None:
    first = store.current()
    clock.now += 10
    second = store.rotate()
    clock.now += 10
    third = store.rotate()

    assert [k.kid for k in store.published()] == [third.kid, second.kid, first.kid]
    assert [k.retired for k in store.published()] == [None, T0 + 20, T0 + 10]

    clock.now = T0 + 10 + GRACE  # the first key's grace ends; the second's not yet
    assert [k.kid for k in store.published()] == [third.kid, second.kid]


def test_rotation_before_first_use_makes_one_key(store: KeyStore) -> None:
    key = store.rotate()

    assert store.published() == [key]


def test_without_grace_a_retired_key_leaves_at_once(tmp_path: Path, clock: FakeClock) -> None:
    store = KeyStore(tmp_path, clock=clock, grace_seconds=0)
    old = store.current()
    new = store.rotate()

    assert [k.kid for k in store.published()] == [new.kid]
    assert store.find(old.kid) is None


def test_find_knows_only_published_kids(store: KeyStore) -> None:
    key = store.current()

    assert store.find(key.kid) == key
    assert store.find("no-such-kid") is None
