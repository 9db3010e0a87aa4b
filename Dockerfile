# syntax=docker/dockerfile:1
# One image for the console and the worker; the command chooses (README, "Deploying"), and each
# is the text of its package.json script, run without npm in between: npm exits on SIGTERM and
# leaves its child running, so a worker would be killed at the end of the pod's grace instead of
# finishing its in-flight sends.
#   console: next start                          (package.json "start"; port 3000)
#   worker:  node --enable-source-maps dist/worker/main.mjs
#                                                (package.json "worker"; migrates at start; probes on 9464)
# `npm run build` writes both outputs: the console's `.next/` and the worker's one-file bundle
# (scripts/build-worker.ts; plain Node holds ~45 MB less than tsx did). The CLI (`npm run ledger`)
# runs its TypeScript through tsx, a production dependency for that reason.

ARG NODE_VERSION=20.20.2

# Every dependency, for the build.
FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

# The console's production build (.next/) and the worker's bundle (dist/worker/).
FROM deps AS build
ENV NEXT_TELEMETRY_DISABLED=1
COPY . .
# Its cache (Turbopack's, hundreds of MB) stays out of the image.
RUN npm run build && rm -rf .next/cache

# Production dependencies only: what the final stage ships.
FROM node:${NODE_VERSION}-bookworm-slim AS production-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production NEXT_TELEMETRY_DISABLED=1 PATH=/app/node_modules/.bin:$PATH
WORKDIR /app
# Owned by root, read-only to the process: the image's code cannot be rewritten by what runs it.
COPY --from=production-deps /app/node_modules ./node_modules
COPY --from=build /app/.next ./.next
COPY --from=build /app/dist ./dist
COPY package.json package-lock.json tsconfig.json next.config.mjs ./
COPY app ./app
COPY components ./components
COPY config ./config
COPY db ./db
COPY lib ./lib
COPY worker ./worker
COPY scripts ./scripts
COPY testing/smtp-sink.ts ./testing/smtp-sink.ts
COPY deploy/docker/healthcheck.mjs ./deploy/docker/healthcheck.mjs
# The node image's unprivileged user (uid 1000). Next writes its cache under .next/cache.
RUN mkdir -p .next/cache && chown node:node .next/cache
USER node
EXPOSE 3000 9464
# Liveness of whichever process this container runs: the console's /api/health, else the worker's /healthz.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 CMD ["node", "deploy/docker/healthcheck.mjs"]
CMD ["next", "start"]
