"""The rules on a Workflow's ``links``: the callback the platform posts the outcome to."""

from __future__ import annotations

from collections.abc import Mapping

from emulator.calling import ruleset as R
from emulator.calling.model import ActionType
from emulator.calling.rules.checker import Checker, absolute_scheme
from emulator.calling.ruleset import ERROR, WARNING
from emulator.jsonutil import JSON, child, find_key


def check_links(
    c: Checker, doc: Mapping[str, JSON], keys: dict[str, str], kinds: list[ActionType | None]
) -> None:
    where = c.where("$", keys, "links")
    links = c.get(doc, keys, "links")
    callback: JSON = None
    cb_where = child(where, "callback")
    if links is not None:
        if not isinstance(links, dict):
            c.type_error(where, "an object", links)
            return
        cb_key = _members(c, links, where)
        if cb_key is not None:
            cb_where = child(where, cb_key)
            callback = links[cb_key]
            if cb_key != "callback":
                c.add(R.WF_CASING, cb_where, f"'{cb_key}' is written 'callback'")
    if callback is None:
        ends_call = bool(kinds) and kinds[-1] in (ActionType.HANGUP, ActionType.REJECT)
        if kinds and not ends_call:
            c.add(
                R.WF_NO_CALLBACK,
                cb_where,
                "no callback: the platform runs these actions, then hangs up and posts nothing",
            )
        return
    _callback(c, callback, cb_where)


def _members(c: Checker, links: Mapping[str, JSON], where: str) -> str | None:
    """Check the links other than the callback, and the callback's other spellings; the key of
    the callback the platform uses, if any."""
    spellings = [k for k in links if k.lower() == "callback"]
    cb_key = find_key(links, "callback")
    for key, uri in links.items():  # the callback itself is checked by ``_callback``
        if key != cb_key and uri is not None and not isinstance(uri, str):
            c.type_error(child(where, key), "a URI string", uri)
    for other in spellings:
        if other != cb_key:
            c.add(
                R.WF_DUPLICATE_FIELD,
                child(where, other),
                f"'{other}' and '{cb_key}' name the same link; '{cb_key}' is used",
            )
    return cb_key


def _callback(c: Checker, callback: JSON, where: str) -> None:
    """The callback is an absolute https URI (http is a warning when allowed for local work)."""
    uri = c.string(callback, where)
    if uri is None:
        return
    scheme = absolute_scheme(uri)
    if scheme is None:
        c.add(R.WF_CALLBACK_URI, where, "callback is not an absolute http(s) URI", uri)
    elif scheme == "http":
        severity = WARNING if c.context.allow_http else ERROR
        allowed = " (allowed for local work)" if c.context.allow_http else ""
        c.add(
            R.WF_CALLBACK_HTTPS,
            where,
            f"callback uses http, not https{allowed}",
            uri,
            severity=severity,
        )
