#!/bin/sh
# Entrypoint of Assay's Python image: optional one-off steps, then the command itself
# (exec, so it gets the container's signals: gunicorn and RQ shut down gracefully).
#   ASSAY_MIGRATE=1  apply the database migrations first (`assay db upgrade`)
#   ASSAY_SEED=1     then create the demo user and project (`assay seed`, idempotent;
#                    the demo password is public: not for a shared server)
set -eu

if [ "${ASSAY_MIGRATE:-0}" = "1" ]; then
    echo "assay-entrypoint: applying database migrations" >&2
    assay db upgrade
fi

if [ "${ASSAY_SEED:-0}" = "1" ]; then
    echo "assay-entrypoint: seeding the demo project" >&2
    assay seed
fi

if [ "$#" -eq 0 ]; then
    set -- assay serve --host 0.0.0.0 --port "${ASSAY_PORT:-8000}"
fi

exec "$@"
