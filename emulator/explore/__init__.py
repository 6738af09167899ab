"""Exploring a calling bot's call flow (``botemu explore``, in progress): the states a caller can
observe (``states.py``) and the caller's moves from each (``edges.py``). It may import the
calling package and the infrastructure, never the service, the runner or the command line.
"""
