// Get a token from botemu with the real msal-node, as the JavaScript SDK's MsalAppCredentials
// does: node msal_token.js AUTHORITY CLIENT_ID SECRET SCOPE [KNOWN_AUTHORITY]. Prints one JSON
// line: the token (or MSAL's error) and the hosts MSAL asked, from its own log. The CA to trust
// comes from NODE_EXTRA_CA_CERTS.

const { ConfidentialClientApplication, LogLevel } = require('@azure/msal-node');

const [authority, clientId, clientSecret, scope, known] = process.argv.slice(2);
const log = [];
const app = new ConfidentialClientApplication({
    auth: { clientId, clientSecret, authority, knownAuthorities: known ? [known] : [] },
    system: {
        loggerOptions: {
            loggerCallback: (level, message) => log.push(message),
            piiLoggingEnabled: true,
            logLevel: LogLevel.Verbose
        }
    }
});

app.acquireTokenByClientCredential({ scopes: [scope], skipCache: true })
    .then((result) => ({ token: result.accessToken }))
    .catch((error) => ({ token: null, error: `${ error.errorCode }: ${ error.message }` }))
    .then((report) => {
        report.log = log.filter((line) => /https?:\/\/|ENOTFOUND|endpoint/i.test(line));
        console.log(JSON.stringify(report));
    });
