import v8 from 'node:v8';

/**
 * How far V8 lets the heap grow past what the last full collection kept: to twice the live set
 * instead of its own dynamic factor (up to four times). The worker's live heap is ~36 MB while it
 * sends (a heap snapshot at 1 × 64 on Postmark); everything a notice allocates lives for its
 * ~100 ms in flight, so the young generation promotes it, and with the dynamic factor the old
 * generation grew to 140–170 MB of mostly garbage before V8 collected it: peak RSS 258–261 MB.
 * With the factor at 2, the same runs peak at 180–195 MB at no measurable CPU (README, Performance;
 * the figures are in the issue 27 note). Read by V8 at every full collection, so setting it here,
 * at start, holds for every way the worker is launched (npm run worker, the image, compose,
 * Kubernetes, the demo, the tests' bundle).
 *
 * An operator's own `--heap-growing-percent` on the command line (0: V8's dynamic factor) wins.
 */
export const HEAP_GROWING_PERCENT = 100;

export function boundHeapGrowth({
  execArgv = process.execArgv,
  setFlags = (flags: string) => v8.setFlagsFromString(flags),
}: { execArgv?: readonly string[]; setFlags?: (flags: string) => void } = {}): number | null {
  if (execArgv.some((arg) => /^--heap[-_]growing[-_]percent(=|$)/.test(arg))) return null;
  setFlags(`--heap-growing-percent=${String(HEAP_GROWING_PERCENT)}`);
  return HEAP_GROWING_PERCENT;
}
