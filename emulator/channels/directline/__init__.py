"""Direct Line 3.0: the user side that Web Chat, the Direct Line client library and Botium speak.
May import: ``emulator.channels`` and what it may import (the connector, transcripts, config).

``grants.py`` keeps the bots' secrets and this run's tokens; ``service.py`` the conversations,
their activities and watermarks, and the sockets' outboxes; ``routes.py`` the REST routes and
the stream under ``/v3/directline``. A running botemu mounts it with ``setup_directline``
(``emulator.service``). docs/directline.md.
"""

from __future__ import annotations

from emulator.channels.directline.errors import DirectLineError
from emulator.channels.directline.grants import Grant, Grants
from emulator.channels.directline.routes import (
    DIRECTLINE,
    PREFIX,
    directline_routes,
)
from emulator.channels.directline.service import DirectLine, Limits, bot_key

__all__ = [
    "DIRECTLINE",
    "PREFIX",
    "DirectLine",
    "DirectLineError",
    "Grant",
    "Grants",
    "Limits",
    "bot_key",
    "directline_routes",
]
