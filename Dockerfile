# syntax=docker/dockerfile:1
# check=skip=InvalidDefaultArgInFrom
# One Dockerfile for the three services; the build argument SERVICE names the one to build. From the
# repository root:
#   docker build --build-arg SERVICE=identity -t attest-identity .
#   docker build --build-arg SERVICE=transactions -t attest-transactions .
#   docker build --build-arg SERVICE=prices -t attest-prices .
# The image is the stage named after the service (at the end of this file): the runtime stage, the same for
# all three, plus that service's ports and health check. SERVICE has no default on purpose: a build without
# it fails (hence the check skipped above, which warns of a FROM whose ARG has no default).
ARG SERVICE

FROM node:20-slim AS build
RUN npm install -g pnpm@10
WORKDIR /src
COPY pnpm-lock.yaml pnpm-workspace.yaml package.json tsconfig.base.json tsconfig.build.json ./
COPY patches ./patches
COPY packages ./packages
COPY services ./services
RUN pnpm install --frozen-lockfile
# Declared after the install, so that the layers above are built once and cached for the three services.
ARG SERVICE
RUN pnpm --filter @attest/${SERVICE}... --filter @attest/cli run build \
 && pnpm --filter @attest/${SERVICE} deploy --prod /out \
 && pnpm --filter @attest/cli deploy --prod /cli

FROM node:20-slim AS runtime
# Heap limits (docs/deploy.md, "Memory"): 4 MB semi-spaces keep the young generation at 8 MB instead of up
# to 32 MB, and the old generation is capped well below the 512 Mi limit of the Kubernetes manifests.
ENV NODE_ENV=production \
    NODE_OPTIONS="--max-old-space-size=384 --max-semi-space-size=4" \
    DATA_DIR=/data \
    ADMIN_HOST=0.0.0.0
WORKDIR /app
COPY --from=build --chown=root:root /out /app
# The admin command line: `attest-manage …` (e.g. kubectl exec deploy/<service> -- attest-manage …) talks to
# this container's admin port on 127.0.0.1 with ADMIN_TOKEN from the environment.
COPY --from=build --chown=root:root /cli /opt/attest-cli
RUN printf '#!/bin/sh\nexec node /opt/attest-cli/dist/main.js "$@"\n' > /usr/local/bin/attest-manage \
 && chmod 755 /usr/local/bin/attest-manage
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
# Migrations run at start under an advisory lock, so any number of replicas may start at once; or as a
# step of their own (a Kubernetes init container, a release job): `node dist/main.js migrate`, with
# MIGRATE_ON_START=false for the service.
CMD ["node", "dist/main.js"]

# Per service: its public and admin ports (the defaults of <NAME>_PORT and <NAME>_ADMIN_PORT), and a health
# check on /healthz of its public port. HEALTHCHECK takes no build arguments, hence a stage each.
FROM runtime AS identity
EXPOSE 4000 4100
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.IDENTITY_PORT||4000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"

FROM runtime AS transactions
EXPOSE 4001 4101
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.TRANSACTIONS_PORT||4001)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"

FROM runtime AS prices
EXPOSE 4002 4102
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PRICES_PORT||4002)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"

# The image: the stage named by SERVICE (a blank SERVICE fails here: "base name should not be blank").
FROM ${SERVICE}
