# Copyright (c) Microsoft Corporation. All rights reserved.
# Licensed under the MIT License.

from .dialog_bot import DialogBot
from .auth_bot import AuthBot

__all__ = ["DialogBot", "AuthBot"]
