"""Conformance probes: connect to a bot as the platform (or an attacker) would, report findings.
May import connector, identity, calling, transcripts, certs and infrastructure; nothing above.

A probe reports what the bot accepts as ``Finding`` values. The infrastructure: ``config``,
``errors``, ``findings``, ``jsonutil``, ``jsonpos``, ``ids``, ``inputs``, ``patterns``, ``guard``,
``client``. Above it (never imported): ``service``, ``runner``, ``cli``, ``scenario``, ``logview``.

``auth``          the auth probe of a messaging bot (``auth_cases``: its rules and cases)
``auth_calling``  the auth probe of a calling bot (Bearer tokens on calling requests)
``tls``           client certificates a calling bot must refuse (``tls_cases``: its cases)
``tokens``        the good and bad tokens of the auth probes (``TokenFactory``)
``probing``       what the auth probes share: a case, sending it, running the cases, verdicts

The command line is ``emulator/cli/probe.py`` (``botemu probe ...``) and ``emulator/cli/certs.py``
(``botemu certs``).
"""
