"""Scenarios from real calls: a stored call read back (``reading.py``), the caller's steps that
do again what the caller did (``steps.py``, checked by the engine in ``verify.py``), the
scenario's YAML (``writing.py``, ``convert.py``: ``scenario_of``), and the masking of volatile
prompt text (``masking.py``) that replay and explore share. It may import the calling package,
the audio (to time prompts as a call did), transcripts and the infrastructure, never the scenario
language, explore, the service, the runner or the command line (``botemu transcript
to-scenario`` checks the text it makes with the scenario loader).
"""
