"""The service tests' shared fixture: ``running``, botemu with the reference IVR bot registered
by its calling endpoint (``test_phone.py``), for the phone's other test modules."""

from tests.service.test_phone import running  # noqa: F401 (a fixture)
