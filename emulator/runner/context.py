"""What a runner holds for every scenario it runs: the target, the transcript store, the run's
settings, one aiohttp session, the prompt files and Bearer tokens found so far, and the botemu
conversations and probes go through.

``RunContext`` is the state ``Runner`` (runner.py) is built on; calls, conversations and probes
are functions of it (``calls.py``, ``conversations.py``, ``probes.py``).
"""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path

import aiohttp

from emulator.calling.engine import DEFAULT_MAX_WORKFLOWS, Media
from emulator.calling.settings import PromptTiming
from emulator.calling.tokens import Resolved
from emulator.config import ServiceConfig
from emulator.runner.chat import Local
from emulator.runner.common import Target
from emulator.transcripts.store import TranscriptError, TranscriptStore


class RunContext:
    """A runner's state. ``http`` is the session while the runner is open (None otherwise)."""

    def __init__(
        self,
        target: Target,
        store: TranscriptStore,
        *,
        seed: int | None = None,
        max_workflows: int | None = None,
        timeout: float | None = None,
        prompt_timing: PromptTiming | None = None,
    ) -> None:
        """``timeout``: seconds the bot has to answer each request (calls: 15 by default).
        ``prompt_timing``: how long every call's text prompts play, unless its scenario's
        ``platform: {prompt_timing}`` says otherwise (None: ``CallSettings``' default,
        ``$BOTEMU_PROMPT_TIMING``, else ``estimate``)."""
        self.target = target
        self.store = store
        self.seed = seed
        self.max_workflows = max_workflows or DEFAULT_MAX_WORKFLOWS
        self.timeout = timeout
        self.prompt_timing = prompt_timing
        self.http: aiohttp.ClientSession | None = None
        self.media: dict[str, Media] = {}
        """The prompt files fetched so far (shared by every call)."""
        self.tokens: dict[str | None, Resolved] = {}
        """The Bearer token source of calls, per app id."""
        self.lock = asyncio.Lock()
        self._ssl: ssl.SSLContext | None = None
        self._local: Local | None = None

    @property
    def session(self) -> aiohttp.ClientSession:
        """The aiohttp session (the runner is open)."""
        assert self.http is not None
        return self.http

    @property
    def emulator_url(self) -> str | None:
        """The botemu conversations go through: ``Target.emulator``, or the in-process one."""
        if self.target.emulator is not None:
            return self.target.emulator.rstrip("/")
        return self._local.url if self._local is not None else None

    @property
    def emulator_config(self) -> ServiceConfig | None:
        """The in-process emulator's configuration (placeholders for a bot), once started."""
        return self._local.config if self._local is not None else None

    @property
    def control_certs(self) -> Path | None:
        """The certificates directory that holds the running botemu's control secret."""
        return self.target.control_certs or self.target.certs

    async def local_emulator(self) -> Local:
        """The in-process botemu, started the first time it is needed."""
        async with self.lock:
            if self._local is None:
                self._local = await Local.start(self.target, self.store)
            return self._local

    def ssl_context(self) -> ssl.SSLContext:
        """The client context for https calling bots (made once)."""
        if self._ssl is None:
            from emulator.certs import client_ssl_context, ensure_certs

            paths = ensure_certs(self.target.certs or Path("certs"))
            self._ssl = client_ssl_context(paths, ca_file=self.target.ca)
        return self._ssl

    def verdict(self, transcript_id: str, reason: str, passed: bool) -> None:
        """Record the verdict on a transcript of this store."""
        try:
            self.store.finish(transcript_id, reason=reason, passed=passed)
        except TranscriptError:
            pass  # a transcript another botemu keeps: its verdict is not ours to write

    async def close(self) -> None:
        """Stop the in-process botemu and close the session (the store stays open)."""
        local, self._local = self._local, None
        if local is not None:
            await local.close()
        http, self.http = self.http, None
        if http is not None:
            await http.close()
