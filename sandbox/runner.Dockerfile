# The image every Docker-sandboxed bot runs in: Python 3 and Node, and a non-root user.
# CI builds it FROM a debootstrap-made base that already has python3 and nodejs (no registry
# and no network during the build); elsewhere the default base is a public Python image.
ARG BASE_IMAGE=python:3.11-slim-bookworm
FROM ${BASE_IMAGE}

# Install Node only where the base lacks it (the public Python image); needs network then.
RUN command -v node >/dev/null 2>&1 || { apt-get update \
    && apt-get install -y --no-install-recommends nodejs \
    && rm -rf /var/lib/apt/lists/*; }

# A fixed, unprivileged uid with no home and no shell; /tmp is the only writable place.
RUN echo 'bot:x:10001:10001:arena bot:/tmp:/usr/sbin/nologin' >> /etc/passwd \
    && echo 'bot:x:10001:' >> /etc/group \
    && mkdir -p /bot /kit

ENV LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HOME=/tmp
USER 10001:10001
WORKDIR /bot
