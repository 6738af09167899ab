"""Running scenarios against a bot: one call, conversation or probe (``runner``), or a whole suite
(``suite``). Sits above the running emulator: may import ``emulator.service``, ``.scenario``,
``.conformance``, ``.calling``, ``.connector`` and the infrastructure, never ``emulator.cli``."""
