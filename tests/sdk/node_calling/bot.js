/*-----------------------------------------------------------------------------
A calling bot on the platform's Node calling SDK (botbuilder-calling 3.0.1), written the way the
SDK's calling sample writes one, run against botemu by tests/sdk/test_node_calling_sdk.py.

The call: answer, a DTMF menu (Prompts.choice), an account number (Prompts.digits, ended by #),
a message (Prompts.record), then goodbye and hang up.

Settings, from the environment (as in the SDK's sample) or the command line:

    PORT (or argv[2])            port to listen on, on 127.0.0.1
    CALLBACK_URL                 where the platform posts results: this bot's /api/calls
    MICROSOFT_APP_ID             the bot's app id (the audience its tokens must carry)
    MICROSOFT_APP_PASSWORD       the bot's app password
    OPENID_METADATA              the platform's OpenID metadata URL (botemu's connector metadata,
                                 {base}/_identity/v3.1/.well-known/openidconfiguration): the SDK
                                 takes the issuer and jwks_uri of every calling token from it

Every line the bot prints is "<what>: <detail>" on stdout, for the test to read.
-----------------------------------------------------------------------------*/

var restify = require('restify');
var calling = require('botbuilder-calling');

var port = Number(process.argv[2] || process.env.PORT || 3978);

function log(what, detail) {
    console.log(what + ': ' + detail);
}

//=========================================================
// Bot Setup
//=========================================================

var server = restify.createServer();

// Log the status the SDK answers every request with (the connector's handler ends the response
// itself, so this watches the response rather than waiting for restify's 'after' event).
server.pre(function (req, res, next) {
    res.on('finish', function () {
        log('http', req.method + ' ' + req.url + ' ' + res.statusCode);
    });
    return next();
});

// The verify endpoint replaces the SDK's whole default endpoint set; refreshEndpoint and
// stateEndpoint are left out because this bot keeps its dialog state in memory (below).
var connector = new calling.CallConnector({
    callbackUrl: process.env.CALLBACK_URL,
    appId: process.env.MICROSOFT_APP_ID,
    appPassword: process.env.MICROSOFT_APP_PASSWORD,
    endpoint: {
        verifyEndpoint: process.env.OPENID_METADATA
    }
});

// The SDK's default storage is the platform's state service (via the connector's
// refreshEndpoint/stateEndpoint), which botemu does not emulate: keep state in memory.
var bot = new calling.UniversalCallBot(connector, { storage: new calling.MemoryBotStorage() });
server.post('/api/calls', connector.listen());

bot.on('error', function (err) {
    log('error', err && err.message ? err.message : String(err));
});

//=========================================================
// Calling Dialogs
//=========================================================

bot.dialog('/', [
    function (session) {
        log('call', session.message.address.conversation.id);
        session.send('Welcome to the botemu test line.');
        calling.Prompts.choice(session, 'For sales press 1. For support press 2.', [
            { name: 'sales', dtmfVariation: '1', speechVariation: ['sales'] },
            { name: 'support', dtmfVariation: '2', speechVariation: ['support'] }
        ]);
    },
    function (session, results) {
        if (!results.response) {
            log('menu', 'none');
            session.endConversation('Sorry, I did not get that. Goodbye.');
            return;
        }
        log('menu', results.response.entity);
        calling.Prompts.digits(session, 'Please enter your account number, then press pound.', 10,
            { stopTones: ['#'] });
    },
    function (session, results) {
        if (!results.response) {
            log('digits', 'none');
            session.endConversation('Sorry, I did not get that. Goodbye.');
            return;
        }
        log('digits', results.response);
        calling.Prompts.record(session, 'Please leave a message after the beep.',
            { playBeep: true, recordingFormat: 'wav', maxDurationInSeconds: 30 });
    },
    function (session, results) {
        if (results.response) {
            var audio = results.response.recordedAudio;
            log('record', results.response.lengthOfRecordingInSecs + ' s, ' +
                (audio ? audio.length : 0) + ' bytes' +
                (audio ? ', starts ' + JSON.stringify(audio.slice(0, 4).toString('latin1')) : ''));
        } else {
            log('record', 'none');
        }
        session.endConversation('Thank you. Goodbye.');
    }
]);

//=========================================================
// Server
//=========================================================

server.listen(port, '127.0.0.1', function () {
    log('listening', 'http://127.0.0.1:' + port + '/api/calls');
});
