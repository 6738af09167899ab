"""botemu: a local emulator of a bot platform.

It plays the calling platform (voice calls driven by Workflow webhooks), the connector service
(messaging, REST v3) and the identity service (OAuth tokens, OpenID metadata, signing keys), and it
validates skill manifests.

Its packages are layered, each importing only the ones below it (docs/architecture.md): the
command line (``cli/``) on top, the infrastructure (``findings``, ``errors``, ``jsonutil``) at the
bottom.
"""

__version__ = "0.1.0"
