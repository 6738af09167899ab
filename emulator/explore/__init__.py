"""Exploring a calling bot's call flow (``botemu explore``, in progress): the states a caller can
observe (``states.py``), the caller's moves from each (``edges.py``), the breadth-first crawl
(``crawler.py``) and the tree it prints (``report.py``). It may import the calling package,
transcripts and the infrastructure, never the service, the runner or the command line.
"""
