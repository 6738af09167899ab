"""The error tree of the package.

BotemuError                  root: anything botemu raises on purpose
├── WireError                a JSON document could not be read as a protocol message (has .path)
├── CallerScriptError        a caller script could not be read (has .where)
├── MediaError               audio could not be made or a prompt file is unusable
│                            (calling/media.py; has .problem)
├── TranscriptError          the transcript store could not be opened, read or written
│                            (transcripts/store.py; has .path)
├── ScenarioError            a scenario file is invalid (scenario/loader.py; file, line, column)
│   └── ScenarioFileError    ... or could not be read at all
├── CertError                certificates could not be written or read (certs.py; has .path)
├── ProbeError               a conformance probe could not run (conformance/tls.py; has .url)
├── IdentityError            signing keys could not be read or written (identity/keys.py)
│   └── OAuthError           a token request is refused (RFC 6749 5.2: .error, .status)
├── TokenError               a JWT fails validation (identity/tokens.py; .reason names the check)
└── ConnectorError           a connector request is refused (connector/errors.py; .status,
                             .code: BadArgument, BadSyntax, MissingProperty, Unauthorized,
                             Forbidden, NotFound, MethodNotAllowed, MessageSizeTooBig,
                             ServiceError)

The classes outside this module are defined beside the code that raises them.

Errors carry structured fields so that the CLI and reports can print a precise, one-line message
instead of a traceback.
"""

from __future__ import annotations


class BotemuError(Exception):
    """Root of every error botemu raises on purpose."""


class WireError(BotemuError):
    """A JSON value could not be read as the expected protocol message.

    ``path`` is a JSONPath-like location (``$.actions[1].prompts[0]``) of the offending value;
    ``line`` and ``column`` are set when the text itself is not JSON.
    """

    def __init__(
        self, path: str, message: str, *, line: int | None = None, column: int | None = None
    ) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message
        self.line = line
        self.column = column


class CallerScriptError(BotemuError):
    """A caller script (a YAML list of steps, or the inline form) could not be read.

    ``where`` names the step (``caller[2]`` or ``step 3``) and ``message`` says what was expected.
    """

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message
