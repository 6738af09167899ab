"""Running scenarios against a bot: one call, conversation or probe (``runner.Runner``), or a
whole suite (``suite``: what ``botemu test``, the demo and the pytest plugin share).

It sits above the running emulator: it may import ``emulator.service``, ``emulator.scenario``,
``emulator.conformance``, ``emulator.calling``, ``emulator.connector`` and the infrastructure,
never the command line. Import its modules directly; this package re-exports nothing.
"""
