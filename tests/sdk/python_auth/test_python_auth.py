"""The platform's authentication sample for Python (botbuilder 4.17, OAuthPrompt; ``sample.py``)
signs in through botemu with settings only: ``botemu chat --sign-in-as`` signs in when the
sample sends its OAuth card (the person types the code, as on Web Chat), the sample shows the
token botemu signed for that user, and signs out; on ``msteams`` the Teams variant signs in by
single sign-on (``signin/tokenExchange``), with no card clicked."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.sdk.harness import Botemu
from tests.sdk.python_auth.sample import Sample, sample_pair
from tests.sdk.signin import USER, chat_session, claims, newest_notes, say

pytestmark = pytest.mark.slow

Pair = tuple[Botemu, Sample]


@pytest.fixture(scope="module")
def teams_sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    """The Teams variant: on Web Chat it is the sample itself (a TeamsActivityHandler acts as an
    ActivityHandler outside Teams), on ``msteams`` it takes the Teams client's invokes."""
    yield from sample_pair(tmp_path_factory.mktemp("python-auth"), "teams_app.py")


def _signs_in_shows_the_token_and_signs_out(emulator: Botemu, sample: Sample, *extra: str) -> str:
    """The sample's conversation: a message, the sign-in, "yes" (the sample's ConfirmPrompt: a
    card on Teams, suggested actions elsewhere), the token, ``logout``."""
    chat = chat_session(emulator, sample, *extra)
    try:
        say(chat, "hello", r"You are now logged in\.")
        token = say(chat, "yes", r"Here is your token (\S+)").split()[-1]
        assert claims(token)["name"] == USER.name and claims(token)["upn"] == USER.upn
        say(chat, "logout", r"You have been signed out\.")
        return "\n".join(chat.since(0))
    finally:
        chat.stop()


def test_the_sample_signs_in_on_web_chat_shows_the_users_token_and_signs_out(
    teams_sample: Pair,
) -> None:
    emulator, sample = teams_sample
    mark = sample.mark()
    out = _signs_in_shows_the_token_and_signs_out(emulator, sample)
    assert "You are now logged in." in out and "  ! " not in out, out
    assert not sample.errors(mark), sample.process.since(mark)


def test_on_msteams_single_sign_on_needs_no_card_clicked(teams_sample: Pair) -> None:
    emulator, sample = teams_sample
    mark = sample.mark()
    out = _signs_in_shows_the_token_and_signs_out(emulator, sample, "--channel", "msteams")
    assert "  ! " not in out, out
    notes = newest_notes(emulator)
    assert any("took the exchanged token" in n for n in notes), notes
    assert not any("signed in as" in n for n in notes), notes  # no card was clicked
    assert not sample.errors(mark), sample.process.since(mark)


@pytest.fixture(scope="module")
def teams_no_sso(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    """The Teams variant, with a connection that has no token exchange URL: botemu refuses the
    exchange, as the real service does."""
    extra = {"oauth_connections": [{"name": "graph", "sso": False}]}
    yield from sample_pair(tmp_path_factory.mktemp("python-auth-no-sso"), "teams_app.py", extra)


def test_on_msteams_a_refused_exchange_falls_back_to_the_card(teams_no_sso: Pair) -> None:
    emulator, sample = teams_no_sso
    mark = sample.mark()
    out = _signs_in_shows_the_token_and_signs_out(emulator, sample, "--channel", "msteams")
    # the SDK answers the exchange it could not make with 412, and asks for the card's sign-in
    assert "answered invoke with HTTP 412" in out and "Proceed with regular login" in out, out
    notes = newest_notes(emulator)
    assert any("refused the exchange" in n for n in notes), notes
    assert any("signed in as" in n for n in notes), notes  # the card's sign-in, as clicked
    assert not sample.errors(mark), sample.process.since(mark)
