"""Get a token from botemu with the real MSAL, as the Python SDK's MicrosoftAppCredentials does.

Run with the SDK's Python (test_python_sdk.python_sdk): ``msal_token.py AUTHORITY CLIENT_ID
SECRET SCOPE``. Prints one JSON line: MSAL's result (the access token cut short), its version and
every HTTP request it made (urllib3's log lines), so that a test can tell that nothing but botemu
was asked. The CA to trust comes from REQUESTS_CA_BUNDLE, as for any requests-based client.
"""

import json
import logging
import sys

import msal


class Requests(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("Starting new") or '"' in message:
            self.seen.append(message)


def main() -> None:
    authority, client_id, secret, scope = sys.argv[1:5]
    requests = Requests()
    log = logging.getLogger("urllib3.connectionpool")
    log.setLevel(logging.DEBUG)
    log.addHandler(requests)
    try:
        app = msal.ConfidentialClientApplication(
            client_id, client_credential=secret, authority=authority
        )
        result = app.acquire_token_for_client(scopes=[scope])
    except Exception as e:  # what MSAL raised (an unreachable discovery host, say)
        result = {"exception": f"{type(e).__name__}: {e}"}
    token = result.get("access_token")
    print(json.dumps({"msal": msal.__version__, "requests": requests.seen, "result": result,
                      "token": token}))  # fmt: skip


if __name__ == "__main__":
    main()
