# The template's DefaultConfig, plus the SDK's own settings that point it at botemu, each read
# from the environment variable of the same name as the JavaScript SDK's (docs/sdk.md). Unset,
# each is None and the SDK keeps its default (the public cloud).

import os


class DefaultConfig:
    """Bot Configuration"""

    PORT = int(os.environ.get("PORT", "3978"))
    APP_ID = os.environ.get("MicrosoftAppId", "")
    APP_PASSWORD = os.environ.get("MicrosoftAppPassword", "")
    APP_TYPE = os.environ.get("MicrosoftAppType", "MultiTenant")
    APP_TENANTID = os.environ.get("MicrosoftAppTenantId", "")

    # For botemu: ConfigurationBotFrameworkAuthentication reads these attributes.
    TO_CHANNEL_FROM_BOT_LOGIN_URL = os.environ.get("ToChannelFromBotLoginUrl")
    TO_CHANNEL_FROM_BOT_OAUTH_SCOPE = os.environ.get("ToChannelFromBotOAuthScope")
    TO_BOT_FROM_CHANNEL_TOKEN_ISSUER = os.environ.get("ToBotFromChannelTokenIssuer")
    TO_BOT_FROM_CHANNEL_OPENID_METADATA_URL = os.environ.get("ToBotFromChannelOpenIdMetadataUrl")
    TO_BOT_FROM_EMULATOR_OPENID_METADATA_URL = os.environ.get("ToBotFromEmulatorOpenIdMetadataUrl")
