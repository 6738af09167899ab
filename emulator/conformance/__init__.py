"""Conformance probes: connect to a running bot the way the platform (or an attacker) would and
report what it accepts as ``Finding`` values.

``tls``  client certificates a bot must refuse (spec: Authentication, Calling platform to bot)
``cli``  the ``botemu certs`` and ``botemu probe ...`` subcommands
"""
