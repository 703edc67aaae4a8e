# syntax=docker/dockerfile:1
#
# Assay's web image: the SPA build served by nginx, which proxies /api to the api
# service (one origin for the browser). Build from the repository root:
#   docker build -f docker/web.Dockerfile -t assay-web:local .

# ---- build the SPA ------------------------------------------------------------------
FROM node:20-bookworm-slim AS build

# The build needs no browsers (they are for the e2e tests only).
ENV PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
    npm_config_audit=false \
    npm_config_fund=false \
    npm_config_update_notifier=false

WORKDIR /src/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci
COPY frontend/ ./
RUN npm run build

# ---- serve it -----------------------------------------------------------------------
FROM nginx:stable-alpine AS web

RUN rm -f /etc/nginx/conf.d/default.conf
COPY docker/nginx.conf /etc/nginx/nginx.conf
COPY --from=build /src/frontend/dist /usr/share/nginx/html

EXPOSE 80
HEALTHCHECK --interval=15s --timeout=5s --start-period=10s --retries=3 \
    CMD ["wget", "-q", "-O", "/dev/null", "http://127.0.0.1/"]
