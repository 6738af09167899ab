"""The calling platform: the wire format and rules of Workflows (pure), the engine that runs them
in virtual time with a scripted caller (pure), and the HTTP(S) calls that drive a bot.

It may import identity (the calling Bearer token), transcripts and the infrastructure below them,
never the service, the runner or the command line.
"""
