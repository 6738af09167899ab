"""Load: ``botemu load`` places many calls at once with Locust run as a library (``runner``),
with counters shared across load processes (``metrics``), thresholds that fail a run
(``thresholds``), a summary of Locust's stats (``summary``) and the options of a run
(``options``); ``user`` holds the Locust user that places calls and ``locustfile`` the file
``locust -f`` runs.

It may import calling, scenario, transcripts and the infrastructure below them, never the
service, the runner or the command line. Importing the package imports neither Locust nor
gevent (Locust monkey-patches on import): only ``runner``, ``metrics``, ``user`` and
``locustfile`` do, and only a load process imports them.
"""
