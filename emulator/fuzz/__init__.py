"""Fuzzing a calling bot's caller (``botemu fuzz``): the moves a caller may make at each waiting
point (``moves.py``); a caller whose steps are drawn as the call runs (``caller.py``); the
choice of callers, steered to the moves not yet made (``guided.py``); the search and its
bounds (``search.py``); the database of examples (``examples.py``); a call's verdict
(``verdict.py``); the replay that confirms each failure and shrinks it to a 1-minimal caller,
and the scenario written for it (``scenarios.py``). It may import the calling package, the
explorer's states, the transcripts and the infrastructure, never the service, the runner or the
command line.
"""
