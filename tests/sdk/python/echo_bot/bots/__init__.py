from .echo_bot import EchoBot

__all__ = ["EchoBot"]
