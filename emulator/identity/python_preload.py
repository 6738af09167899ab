"""botemu's Python preload (docs/sdk.md, "The platform's hosts"). The listener copies this file
as ``sitecustomize.py`` into a folder of its own (``preload_folder``), which a bot is given with
``PYTHONPATH=<that folder>`` and ``BOTEMU_PLATFORM_ADDRESS``, the way zero-code instrumentation
is given, before the interpreter starts. Imported as this module, it does nothing.

Python's requests and urllib read ``HTTPS_PROXY``; aiohttp reads it only for a session made
with ``trust_env=True``. The Agents SDK for Python calls the user token service at the
platform's fixed address with an aiohttp session made without it. This preload makes an
aiohttp session whose ``base_url`` is one of the platform's hosts read the environment's proxy
settings (so its calls reach botemu's listener, as requests' do); every other session, and
everything else, is left alone. Without ``BOTEMU_PLATFORM_ADDRESS`` it does nothing. Another
``sitecustomize`` further on the path still runs.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from types import ModuleType
from typing import Any

HOSTS = frozenset({"login.botframework.com", "login.microsoftonline.com", "login.windows.net",
                   "sts.windows.net", "api.botframework.com"})  # fmt: skip
HERE = os.path.dirname(os.path.abspath(__file__))


def _patch(module: ModuleType) -> None:
    session = getattr(module, "ClientSession", None)
    if session is None or getattr(session, "_botemu_platform", False):
        return
    original = session.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        base = kwargs.get("base_url", args[0] if args else None)
        host = getattr(base, "host", None)
        if host is None and isinstance(base, str):
            host = base.split("://", 1)[-1].split("/", 1)[0].split(":", 1)[0]
        if isinstance(host, str) and host.lower() in HOSTS:
            kwargs.setdefault("trust_env", True)
        original(self, *args, **kwargs)

    session.__init__ = __init__
    session._botemu_platform = True


class _Finder(importlib.abc.MetaPathFinder):
    """Patches ``aiohttp.client`` once it is loaded."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "aiohttp.client":
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader = spec.loader
        execute = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            execute(module)
            _patch(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _next_sitecustomize() -> None:
    others = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is not None and spec.loader is not None and spec.origin != __file__:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


def preload_folder(certs_dir: str) -> str:
    """``<certs_dir>/python-preload`` with this file as its ``sitecustomize.py`` (written when
    missing or changed); the folder to put on a bot's ``PYTHONPATH``."""
    folder = os.path.join(os.path.abspath(certs_dir), "python-preload")
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, "sitecustomize.py")
    with open(__file__, encoding="utf-8") as source:
        text = source.read()
    current = None
    if os.path.exists(target):
        with open(target, encoding="utf-8") as existing:
            current = existing.read()
    if current != text:
        with open(target, "w", encoding="utf-8") as out:
            out.write(text)
    return folder


if __name__ == "sitecustomize":
    if os.environ.get("BOTEMU_PLATFORM_ADDRESS"):
        if "aiohttp.client" in sys.modules:
            _patch(sys.modules["aiohttp.client"])
        else:
            sys.meta_path.insert(0, _Finder())
    _next_sitecustomize()
