# Copyright (c) Microsoft Corporation. All rights reserved.
# Licensed under the MIT License.

from .logout_dialog import LogoutDialog
from .main_dialog import MainDialog

__all__ = ["LogoutDialog", "MainDialog"]
