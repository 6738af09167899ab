"""Fuzzing a calling bot's caller (``botemu fuzz``): the moves a caller may make at each waiting
point, as Hypothesis strategies (``moves.py``); a caller whose steps are drawn as the call runs
(``caller.py``); the search on Hypothesis, which shrinks each distinct failure (``search.py``);
a call's verdict (``verdict.py``); the replay that confirms and tidies each failure, and the
scenario written for it (``scenarios.py``). It may import the calling package, the explorer's
states, the transcripts and the infrastructure, never the service, the runner or the command
line.
"""
