# Copyright (c) Microsoft Corporation. All rights reserved.
# Licensed under the MIT License.

from . import dialog_helper

__all__ = ["dialog_helper"]
