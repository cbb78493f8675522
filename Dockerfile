# L5R rules judge: the Discord bot with its Whoosh index built into the image.
#   docker build -t l5r-judge .
#   docker run --rm -e DISCORD_TOKEN=... l5r-judge
# The token is only ever passed at run time (-e / --env-file); it is never copied into the image.

ARG PYTHON_IMAGE=python:3.11-slim

# ---- build: install the project and its pinned dependency ranges (pyproject.toml) into a venv ----
FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /src
COPY pyproject.toml README.md ./
COPY glossary ./glossary
COPY index ./index
COPY bot ./bot
RUN pip install --no-cache-dir .

# ---- runtime: the venv only (no sources tree, no build tools), run as an unprivileged user ----
FROM ${PYTHON_IMAGE} AS runtime
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    L5R_INDEX_DIR=/var/lib/l5r-judge/index \
    L5R_STATE_DIR=/var/lib/l5r-judge/state
RUN groupadd --system --gid 10001 judge \
    && useradd --system --uid 10001 --gid judge --home-dir /var/lib/l5r-judge --create-home \
       --shell /usr/sbin/nologin judge
COPY --from=build /opt/venv /opt/venv
USER 10001:10001
WORKDIR /var/lib/l5r-judge
# Build the index now so the container answers from its first second; it stays writable by the
# judge user so /reload and house rulings mounted at L5R_HOUSE_RULINGS can rebuild it.
RUN python -m index build
HEALTHCHECK --interval=60s --timeout=20s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import sys; from index.engine import Engine; sys.exit(0 if Engine.open().define('target').entry else 1)"]
CMD ["python", "-m", "bot"]
