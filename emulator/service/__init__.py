"""The running emulator: identity, connector, the control API and the log view in one aiohttp
application (``app.py``), its state (``state.py``), its control API (``control.py``) and its
hosting on a port (``hosting.py``).

It may import every service and probe below it (identity, connector, calling tokens,
conformance, manifest, the log view, transcripts), never the runner or the command line.
"""

from emulator.service.app import make_app
from emulator.service.state import CONTROL, EMULATOR, USER, Emulator, config_document

__all__ = ["CONTROL", "EMULATOR", "USER", "Emulator", "config_document", "make_app"]
