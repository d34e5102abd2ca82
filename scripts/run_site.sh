#!/usr/bin/env bash
# Serve the site with gunicorn and run one evaluation worker beside it; stop both on Ctrl-C or exit.
set -euo pipefail
PY=${PY:-.venv/bin/python}
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
# Everything written under var/ (database, broker messages, logs, the generated SECRET_KEY) is ours only.
umask 077
mkdir -p var/log

"$PY" manage.py worker --loglevel INFO >var/log/worker.log 2>&1 &
worker_pid=$!
stop() {
  trap - INT TERM EXIT
  echo "stopping worker ($worker_pid) and site"
  kill -TERM "$worker_pid" 2>/dev/null || true
  wait "$worker_pid" 2>/dev/null || true
}
trap stop INT TERM EXIT

echo "worker started (log: var/log/worker.log)"
# A fresh install ranks something real at once: the built-in reference kernels, judged by that worker in the
# background (quick ones first; already-submitted ones are skipped). KGB_SEED_REFERENCE=0 skips this.
if [ "${KGB_SEED_REFERENCE:-1}" != 0 ]; then
  "$PY" manage.py judge_reference_kernels || echo "could not queue the reference kernels (see above)"
fi
echo "serving http://$HOST:$PORT/  (Ctrl-C stops the site and the worker)"
"$(dirname "$PY")/gunicorn" kgbweb.wsgi --bind "$HOST:$PORT" --workers 2 --threads 4 --timeout 120 \
  --access-logfile - &
site_pid=$!
wait "$site_pid"
