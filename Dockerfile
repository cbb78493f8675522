# L5R rules judge: the Discord bot, with its Whoosh index built into the image.
#   docker build -t l5r-judge .
#   docker run -d --name l5r-judge --restart unless-stopped --env-file .env \
#       -v l5r-judge-state:/var/lib/l5r-judge/state l5r-judge
# or, with PostgreSQL and two shards: docker compose up -d (compose.yaml)
# The token is only ever passed at run time (-e / --env-file); it is never copied into the image.
# .ci/container-check builds and runs this file in CI (with buildah and podman).

ARG PYTHON_IMAGE=python:3.11-slim

# ---- deps: the dependencies alone, in /opt/venv (rebuilt only when pyproject.toml changes) ----
FROM ${PYTHON_IMAGE} AS deps
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    ORT_DISABLE_TELEMETRY=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /src
COPY pyproject.toml ./
# The runtime dependencies and the build backend, read from pyproject.toml (pinned ranges there).
RUN python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb')); print('\n'.join(p['project']['dependencies'] + p['build-system']['requires']))" > /tmp/requirements.txt \
    && pip install --no-cache-dir -r /tmp/requirements.txt

# ---- venv: what the runtime copies — the dependencies without pip, setuptools and wheel, plus a .pth
# line that puts the project's own folder (/opt/app, a separate small layer) on the path ----
FROM deps AS venv
RUN python -c "import sysconfig; print(sysconfig.get_path('purelib', vars={'base': '/opt/app', 'platbase': '/opt/app'}))" \
        > "$(python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/l5r-judge-app.pth" \
    && python -m pip uninstall --yes --quiet setuptools wheel pip

# ---- build: the project alone, installed under /opt/app (its packages, shipped data and the
# l5r-judge command) with the deps stage's tools; nothing of it lands in /opt/venv ----
FROM deps AS build
COPY README.md LICENSE ./
COPY glossary ./glossary
COPY index ./index
COPY bot ./bot
RUN pip install --no-cache-dir --no-deps --no-build-isolation --no-warn-script-location --prefix /opt/app .

# ---- runtime: the venv (one large layer, the same from one code change to the next), the project
# (a few MB) and its index; no sources tree, no build tools; run as an unprivileged user ----
FROM ${PYTHON_IMAGE} AS runtime
ENV PATH=/opt/app/bin:/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    ORT_DISABLE_TELEMETRY=1 \
    L5R_INDEX_DIR=/var/lib/l5r-judge/index \
    L5R_STATE_DIR=/var/lib/l5r-judge/state \
    HEALTH_PORT=8080 \
    HEALTH_HOST=0.0.0.0
RUN groupadd --system --gid 10001 judge \
    && useradd --system --uid 10001 --gid judge --home-dir /var/lib/l5r-judge --create-home \
       --shell /usr/sbin/nologin judge \
    && install --directory --owner=judge --group=judge /var/lib/l5r-judge/state
COPY --from=venv /opt/venv /opt/venv
COPY --from=build /opt/app /opt/app
USER 10001:10001
WORKDIR /var/lib/l5r-judge
# Build the index now so the container answers from its first second; it stays writable by the
# judge user so /reload and house rulings mounted at L5R_HOUSE_RULINGS can rebuild it.
RUN python -m index build
# The synced-commands hash: keep it in a volume so a new container does not re-sync the commands
# (Discord rate-limits syncing).
VOLUME ["/var/lib/l5r-judge/state"]
# /healthz and /metrics (Prometheus).
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 \
    CMD ["python", "-m", "bot", "health"]
# SIGTERM: the bot closes the gateway, finishes the answers in flight and exits 0.
STOPSIGNAL SIGTERM
CMD ["python", "-m", "bot", "run"]
