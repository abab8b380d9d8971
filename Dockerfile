# Tollgate: multi-stage image. The build stage installs everything and compiles; the final stage
# holds the compiled packages and production dependencies only, and runs as the non-root `node` user.
# `node scripts/dockerfile-run.js` runs these same steps without Docker (CI does).
# RUN steps use paths relative to WORKDIR only (the script maps absolute paths of COPY and WORKDIR).

FROM node:20-bookworm-slim AS build
ENV TURBO_TELEMETRY_DISABLED=1
WORKDIR /app
COPY . .
RUN npm ci --no-audit --no-fund
RUN npm run build
# What the final stage needs: every workspace's package.json, its compiled code and assets.
RUN node scripts/prune-for-deploy.js image-root

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
ENV PORT=3000
ENV DATA_DIR=/data
# V8's heap ceiling (docs/configuration.md, "Memory"): keeps RSS under 250 MiB with the check's
# index of 1 000 000 licenses; override with -e NODE_OPTIONS=... (the last --max-old-space-size wins).
ENV NODE_OPTIONS=--max-old-space-size=192
WORKDIR /app
COPY --from=build /app/image-root .
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "apps/server/dist/main.js"]
