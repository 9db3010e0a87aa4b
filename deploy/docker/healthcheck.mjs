/* global process, fetch, AbortSignal -- run by node itself, outside the TypeScript build */
// The image's HEALTHCHECK: liveness of whichever process the container runs. The console answers
// GET /api/health on PORT (next start's, default 3000); the worker answers GET /healthz on
// WORKER_METRICS_PORT (default 9464), on WORKER_METRICS_HOST (default loopback). Exit 0 when one
// answers 200, 1 otherwise: only one of them runs in a container, so either answer is its own.
// Liveness, not readiness: a worker waiting for its database is alive and reconnects by itself.
const metricsHost = process.env.WORKER_METRICS_HOST || '127.0.0.1';
const host = ['0.0.0.0', '::'].includes(metricsHost) ? '127.0.0.1' : metricsHost.includes(':') ? `[${metricsHost}]` : metricsHost;
const targets = [`http://127.0.0.1:${process.env.PORT || 3000}/api/health`, `http://${host}:${process.env.WORKER_METRICS_PORT || 9464}/healthz`];

async function answers(url) {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(3_000) });
    return response.status === 200;
  } catch {
    return false;
  }
}

const results = await Promise.all(targets.map(answers));
process.exit(results.some(Boolean) ? 0 : 1);
