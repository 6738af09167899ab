"""The locustfile botemu ships: ``locust -f $(botemu load --locustfile) --host URL`` places calls
to the bot at URL with ``CallerUser`` (``emulator.load.user``; its options are ``--botemu-*``)."""

from emulator.load.user import CallerUser

__all__ = ["CallerUser"]
