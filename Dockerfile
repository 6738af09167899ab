# botemu and the reference bots in one image (docs/ci.md, "docker compose").
#
#   docker build -t botemu .
#   docker run --rm -p 127.0.0.1:9070:9070 botemu          # botemu serve, on 0.0.0.0 in the container
#   docker run --rm botemu botemu demo --once              # the bundled scenarios against the reference bots
#
# docker-compose.yml runs botemu beside the reference IVR bot, with the certificates in a volume.

FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    BOTEMU_DB=/data/transcripts.db

WORKDIR /app

# The package first, so that editing the bots or the scenarios does not reinstall it.
COPY pyproject.toml README.md ./
COPY emulator ./emulator
RUN pip install .

# The reference bots and the bundled scenarios are read from the source tree (botemu demo looks in
# the current directory, /app).
COPY examples ./examples
COPY scenarios ./scenarios

# A non-root user owns what the services write: /certs (certificates and signing keys), /data
# (transcripts, voicemail) and /app itself (botemu demo keeps .botemu/demo there). Named volumes
# mounted on /certs and /data start with this ownership.
#
# botemu serve on 0.0.0.0 would hand out placeholder URLs under http://0.0.0.0:9070, which no bot
# can use: serve.yaml makes them http://127.0.0.1:9070, the address published on the host.
RUN useradd --system --uid 10001 --user-group --create-home --home-dir /home/botemu botemu \
    && mkdir -p /certs /data /etc/botemu \
    && printf 'overrides:\n  base_url: http://127.0.0.1:9070\n' > /etc/botemu/serve.yaml \
    && chown botemu:botemu /certs /data /app
USER botemu

# 9070: botemu (connector, identity service, control API); 8443: the reference IVR bot (https).
EXPOSE 9070 8443

HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import json, sys, urllib.request as u; sys.exit(json.load(u.urlopen('http://127.0.0.1:9070/_botemu/health', timeout=3)).get('status') != 'ok')"]

CMD ["botemu", "serve", "--host", "0.0.0.0", "--port", "9070", "--config", "/etc/botemu/serve.yaml", "--certs", "/certs", "--db", "/data/transcripts.db"]
