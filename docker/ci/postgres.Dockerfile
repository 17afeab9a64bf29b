# PostgreSQL for the Compose tests, from Debian's packages on the debootstrap-made base image.
# The build has no network: docker/ci/build-images.sh downloads the .deb files on the host into
# the build context (debs/). It behaves like the official image for what the stack uses:
# POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB, data in /var/lib/postgresql/data, PGPORT.
ARG BASE_IMAGE=arena-base
FROM ${BASE_IMAGE}
COPY debs/ /tmp/debs/
# No service start and no default cluster during the install: the entrypoint makes its own.
RUN printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d \
    && mkdir -p /etc/postgresql-common/createcluster.d \
    && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.d/ci.conf \
    && dpkg -i /tmp/debs/*.deb >/tmp/dpkg.log 2>&1 || { tail -30 /tmp/dpkg.log; exit 1; }; \
    rm -rf /tmp/debs /tmp/dpkg.log \
    && ln -s /usr/lib/postgresql/*/bin/initdb /usr/lib/postgresql/*/bin/postgres \
        /usr/lib/postgresql/*/bin/pg_isready /usr/local/bin/ \
    && mkdir -p /var/lib/postgresql/data /run/postgresql \
    && chown -R postgres:postgres /var/lib/postgresql /run/postgresql
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint.sh
ENV PGDATA=/var/lib/postgresql/data PGPORT=5432 LANG=C.UTF-8
USER postgres
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint.sh"]
