"""The parts of botemu's pytest plugin (``emulator.pytest_plugin``, which holds the fixtures).
May import every botemu package but the command line (``emulator.cli``) and ``emulator.demo``.

``server``   ``BotemuServer``: botemu's services on a background thread, for a test session
``handle``   ``Botemu``: what a test gets, with ``call``, ``chat`` and ``run_scenario``
``results``  the typed results: ``CallResult`` (with its ``Prompt`` values) and ``Message``
"""
