# The toolgate gateway as an image: Node 24 slim, running as the unprivileged `node` user, from the
# same tarballs `pnpm pack:gateway` writes (and .ci/pack-check.mjs installs and runs). Build:
#
#   pnpm install && pnpm pack:gateway        # writes dist-gateway/*.tgz
#   docker build -t toolgate .
#   docker run --init -p 8787:8787 -v "$PWD/site:/srv/toolgate" toolgate
#
# The mounted folder holds toolgate.yaml; relative paths in it (a SQLite file, credentials) resolve
# there, so it must be writable by uid 1000. `--init` reaps the upstream servers' own children.
FROM node:24-slim

COPY dist-gateway/*.tgz /tmp/toolgate/
RUN npm install -g --no-audit --no-fund /tmp/toolgate/*.tgz \
  && rm -rf /tmp/toolgate \
  && npm cache clean --force \
  && mkdir -p /srv/toolgate \
  && chown node:node /srv/toolgate

USER node
WORKDIR /srv/toolgate
EXPOSE 8787
# A container is reached from outside it: listen on every interface (auth is still required).
ENTRYPOINT ["toolgate"]
CMD ["gateway", "--config", "/srv/toolgate/toolgate.yaml", "--host", "0.0.0.0"]
