"""The log view: a live web page of every call and conversation in the transcript store.
It may import the rulebook, the replay library, the audio library, transcripts, the guard and
the infrastructure, never the service.

``botemu serve`` and ``botemu demo`` serve it at the emulator's address (``make_app`` calls
``setup_logview``); ``botemu logview --db FILE`` serves it over a database an earlier run wrote.

- ``routes.py``: the HTTP surface (the page, its static files, the JSON API, the event stream);
- ``feed.py``: the live feed, which polls the store's file for calls that changed;
- ``activities.py``: the activities a conversation carried, for its chat view and ``.transcript``;
- ``explorations.py``: the explorations ``botemu explore`` saved (their list, one document) and the
  vendored layout library (``static/vendor/``) their call-flow page draws with;
- ``replays.py``: "Save as scenario", a call or conversation as the scenario that replays it;
- ``audio.py``: a call's track (``botemu transcript audio``) for the call page's player;
- ``static/``: plain HTML, CSS and JavaScript modules, shipped in the package (no build step, no
  network). Everything from the bot is rendered as text, never as HTML.

``botemu logview`` is ``emulator/cli/logview.py``; docs/logview.md describes the page and the API.
"""

from emulator.logview.routes import LOGVIEW, LogView, setup_logview, standalone_app

__all__ = ["LOGVIEW", "LogView", "setup_logview", "standalone_app"]
