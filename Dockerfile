# syntax=docker/dockerfile:1
# The production image of ledger-indexer: the compiled command, its runtime dependencies and the
# migrations, run as the unprivileged `node` user.
#
#   docker build -t ledger-indexer .
#   docker run --rm -e DATABASE_URL=… -e REDIS_URL=… -e LEDGER_BASE_URL=… ledger-indexer worker
#
# Node 20, pinned to a release; pass --build-arg NODE_IMAGE=… to move to another one.
ARG NODE_IMAGE=node:20.20.2-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Dependencies first, so a change to the sources alone reuses this layer. `prepare` (the build)
# waits for the sources, hence --ignore-scripts here and the explicit build below.
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY workers ./workers
RUN npm run build

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    LEDGER_HTTP_HOST=0.0.0.0 \
    LEDGER_HTTP_PORT=9464
WORKDIR /app
# Runtime dependencies only. --ignore-scripts: `prepare` would run the TypeScript build, whose
# compiler is a dev dependency; the build comes from the stage above instead.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
    && npm cache clean --force \
    && mkdir -p /app/.ledger-indexer \
    && chown node:node /app/.ledger-indexer
# What the command reads at run time: its bundle (dist/cli: the command and the worker entry
# point, with their dependencies but the embedded database's), package.json (the package root
# and --version) and the migrations. The embedded database folder is the one writable place.
COPY --from=build /app/dist/cli ./dist/cli
COPY migrations ./migrations

USER node
# The HTTP surface of `worker` and `serve` (/health, /ready, /status, /metrics).
EXPOSE 9464
# Slim images have no curl: node's own fetch asks /health (the process runs, PostgreSQL answers).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.LEDGER_HTTP_PORT||9464)+'/health',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# The node flags of the command's first line (src/cli/bin.ts), which `node <file>` does not read.
ENTRYPOINT ["node", "--max-semi-space-size=4", "dist/cli/ledger-indexer.js"]
CMD ["--help"]
