# The Kozyri Arena platform image: web (gunicorn), Celery worker and beat, and the admin CLI.
#
#   docker build -t kozyri-arena .                        # public Python base, pip downloads
#   docker/build-wheels.sh && docker build \
#       --build-arg BASE_IMAGE=arena-base -t kozyri-arena .   # any Debian base, no network
#
# The second form is how CI builds it: wheels made on the host (build/wheels) are copied in and
# installed with --no-index, so the build itself needs no network. The wheels must be for the
# base image's Python (3.11 for both bases above). Builds with the classic builder and BuildKit.
ARG BASE_IMAGE=python:3.11-slim-bookworm

FROM ${BASE_IMAGE} AS build
LABEL org.kozyri-arena.stage=build
ENV LANG=C.UTF-8 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
# "wheel[s]" matches nothing when no wheels were built; pip then uses the package index.
COPY pyproject.toml docker/requirements.txt build/wheel[s] /wheels/
COPY docker/install-python.sh /usr/local/lib/arena/install-python.sh
RUN sh /usr/local/lib/arena/install-python.sh /wheels
WORKDIR /app
COPY pyproject.toml README.md ./
COPY arena ./arena
COPY sandbox ./sandbox
COPY web ./web
COPY seeds ./seeds
COPY sample_bots ./sample_bots
# Editable, so the sample bots and kits are found next to the code (web and sandbox look there).
RUN /opt/venv/bin/pip install -q --no-deps --no-build-isolation --no-index -e /app \
    && /opt/venv/bin/python -m compileall -q /app/arena /app/sandbox /app/web

FROM ${BASE_IMAGE}
# Node runs the JavaScript sample bots; a debootstrap base already has it, a public Python image
# gets it from apt (needs network then).
RUN command -v node >/dev/null 2>&1 || { apt-get update \
    && apt-get install -y --no-install-recommends nodejs \
    && rm -rf /var/lib/apt/lists/*; }
# One unprivileged account runs every service; its state lives in volumes under /var/lib/arena.
RUN useradd --system --uid 10001 --user-group --home-dir /var/lib/arena --shell /usr/sbin/nologin arena \
    && mkdir -p /var/lib/arena/storage /var/lib/arena/beat \
    && chown -R arena:arena /var/lib/arena
COPY --from=build /opt/venv /opt/venv
COPY --from=build /app /app
COPY docker/entrypoint.sh docker/wait_for_services.py docker/preflight.py /app/docker/
ENV LANG=C.UTF-8 \
    PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    FLASK_APP=web \
    ARENA_STORAGE_DIR=/var/lib/arena/storage \
    ARENA_SANDBOX=bwrap \
    ARENA_TRUSTED_SANDBOX=bwrap
USER arena
WORKDIR /var/lib/arena
EXPOSE 8000
ENTRYPOINT ["/app/docker/entrypoint.sh"]
CMD ["web"]
