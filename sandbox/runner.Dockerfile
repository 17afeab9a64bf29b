# The image every Docker-sandboxed bot runs in: the toolchains of the ten bot languages (the
# Debian packages in runner-packages.txt) and a non-root user.
# CI builds it FROM a debootstrap-made base that already has every package (scripts/ci-docker.sh;
# no registry and no network during the build); elsewhere the default base is a public Python
# image, and the packages are installed from Debian here (this needs network).
ARG BASE_IMAGE=python:3.11-slim-bookworm
FROM ${BASE_IMAGE}

COPY runner-packages.txt /usr/share/kozyri/runner-packages.txt
RUN pkgs="$(grep -v '^[[:space:]]*\(#\|$\)' /usr/share/kozyri/runner-packages.txt)" \
    && { dpkg -s $pkgs >/dev/null 2>&1 || { apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $pkgs \
    && rm -rf /var/lib/apt/lists/*; }; }

# A fixed, unprivileged uid with no home and no shell; /tmp is the only writable place.
RUN echo 'bot:x:10001:10001:arena bot:/tmp:/usr/sbin/nologin' >> /etc/passwd \
    && echo 'bot:x:10001:' >> /etc/group \
    && mkdir -p /bot /kit

# HOME=/tmp: toolchains keep their caches (Go's build cache, Mono's ~/.mono) in the only
# writable place; the root is read-only.
ENV LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HOME=/tmp
USER 10001:10001
WORKDIR /bot
