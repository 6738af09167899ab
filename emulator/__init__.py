"""botemu: a local emulator of a bot platform.

It plays the calling platform (voice calls driven by Workflow webhooks), the connector service
(messaging, REST v3) and the identity service (OAuth tokens, OpenID metadata, signing keys), and it
validates skill manifests.
"""

__version__ = "0.1.0"
