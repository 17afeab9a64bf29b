# Redis for the Compose tests, from Debian's packages on the debootstrap-made base image (the
# .deb files come from the host through the build context, as for postgres.Dockerfile).
ARG BASE_IMAGE=arena-base
FROM ${BASE_IMAGE}
COPY debs/ /tmp/debs/
RUN printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d \
    && dpkg -i /tmp/debs/*.deb >/tmp/dpkg.log 2>&1 || { tail -30 /tmp/dpkg.log; exit 1; }; \
    rm -rf /tmp/debs /tmp/dpkg.log \
    && mkdir -p /data && chown redis:redis /data
USER redis
WORKDIR /data
ENTRYPOINT []
CMD ["redis-server", "--appendonly", "yes", "--maxmemory-policy", "noeviction"]
