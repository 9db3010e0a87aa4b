import { activeNoticeConfig } from '@/lib/windows/active';
import type { PlannedNotice } from './plan';

/**
 * The producer side of a chaos run: every notice POSTed to /api/v1/reminders with a bearer
 * token, then the identical request again (at once, racing the first, or later), 5xx and
 * network errors retried; evidence opened and resolved around some posts. Each answer is
 * checked: exactly one `created` per notice, the same job id both times. A console that
 * answers nothing but 5xx (or nothing at all) stops the producer: `done` rejects with the
 * last answer instead of the run retrying its way through every notice.
 */

export type ProducerStats = {
  posts: number;
  statuses: Record<string, number>;
  created: number;
  createdTwice: number;
  jobIdMismatches: number;
  evidenceResolved: number;
};

export type Producer = { done: Promise<void>; stats: ProducerStats; problems: string[] };

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// Sixteen requests are in flight at once: this many failures in a row is a broken console,
// not a blip that the retries would ride out.
const FAILURES_IN_A_ROW_TO_STOP = 24;

export function semaphore(limit: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async (task) => {
    if (active >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    active += 1;
    try {
      return await task();
    } finally {
      active -= 1;
      waiting.shift()?.();
    }
  };
}

// A windowed notice is due this long after its first post at the earliest, so the harness can
// give it its window before anything wakes it (the console answers slowly under the chaos).
const WINDOW_LEAD_MS = 3_000;

/**
 * A renewal template shows the charge date, so a renewal notice carries its anchor: chosen so
 * the type's merchant window (t72: −72 h…−24 h) ends at the deadline and opens no later than
 * the due time (t24's 23 h window shortens a 48 h deadline to 23 h: still far past any run).
 */
function anchorFor(type: string, dueAt: number, deadlineAt: number): { anchorAt?: string; deadlineAt: number } {
  const window = activeNoticeConfig().config.noticeTypes[type]?.window;
  if (type === 'payment_recovery' || !window) return { deadlineAt };
  let anchor = deadlineAt - window.to;
  if (anchor + window.from > dueAt) anchor = dueAt - window.from;
  return { anchorAt: new Date(anchor).toISOString(), deadlineAt: Math.min(deadlineAt, anchor + window.to) };
}

function requestBody(notice: PlannedNotice, startedAt: number): Record<string, unknown> {
  const planned = startedAt + notice.dueOffsetMs;
  const dueAt = notice.windowOpensAfterDueMs === null ? planned : Math.max(planned, Date.now() + WINDOW_LEAD_MS);
  // Tight deadlines count from when the request is made, so the API never refuses one as already past.
  const anchored = anchorFor(notice.fact.type, dueAt, Math.max(dueAt, Date.now()) + notice.deadlineAfterMs);
  return {
    type: notice.fact.type,
    identity: notice.fact.identity,
    revision: notice.fact.revision,
    recipient: { email: notice.recipientEmail, timeZone: 'UTC', ...(notice.recipientPhone ? { phone: notice.recipientPhone } : {}) },
    dueAt: new Date(dueAt).toISOString(),
    deadlineAt: new Date(anchored.deadlineAt).toISOString(),
    ...(anchored.anchorAt ? { anchorAt: anchored.anchorAt } : {}),
    payload: notice.payload,
    ...(notice.evidenceRef ? { evidenceRef: notice.evidenceRef } : {}),
    source: 'chaos',
  };
}

/** Posts every notice, then the identical request again (at once, racing, or later); retries 5xx/network errors like a producer would. */
export function runProducer({
  appUrl,
  token,
  planned,
  startedAt,
  onCreated,
}: {
  appUrl: string;
  token: string;
  planned: readonly PlannedNotice[];
  startedAt: number;
  /** Called once per notice, with its job id, when the API answers `created`. */
  onCreated?: (notice: PlannedNotice, jobId: string) => Promise<void>;
}): Producer {
  const stats: ProducerStats = { posts: 0, statuses: {}, created: 0, createdTwice: 0, jobIdMismatches: 0, evidenceResolved: 0 };
  const problems: string[] = [];
  const limit = semaphore(16);
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  let failuresInARow = 0;
  let broken: Error | null = null;

  const noteFailure = (what: string) => {
    failuresInARow += 1;
    if (failuresInARow >= FAILURES_IN_A_ROW_TO_STOP)
      broken ??= new Error(`the producer API failed ${failuresInARow} requests in a row, stopping the producer; the last: ${what}`);
  };

  const call = async (method: string, path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
    for (let attempt = 0; ; attempt += 1) {
      if (broken) throw broken;
      try {
        const response = await fetch(`${appUrl}${path}`, { method, headers, body: JSON.stringify(body) });
        const json = (await response.json().catch(() => ({}))) as Record<string, unknown>;
        stats.posts += 1;
        stats.statuses[String(response.status)] = (stats.statuses[String(response.status)] ?? 0) + 1;
        if (response.status < 500) failuresInARow = 0;
        else noteFailure(`${method} ${path} answered ${response.status} ${JSON.stringify(json).slice(0, 200)}`);
        if (response.status < 500 || attempt >= 5) return { status: response.status, json };
      } catch (error) {
        noteFailure(`${method} ${path} got no answer: ${error instanceof Error ? error.message : String(error)}`);
        if (attempt >= 5) throw error;
      }
      await delay(100 * (attempt + 1));
    }
  };

  const post = async (notice: PlannedNotice, body: () => Record<string, unknown>) => {
    const { status, json } = await limit(() => call('POST', '/api/v1/reminders', body()));
    if (status !== 200 && status !== 201) problems.push(`producer: notice #${notice.index} answered ${status}: ${JSON.stringify(json).slice(0, 200)}`);
    if (json.created === true) stats.created += 1;
    if (json.created === true && typeof json.id === 'string' && onCreated) await onCreated(notice, json.id);
    return { created: json.created === true, jobId: typeof json.id === 'string' ? json.id : null };
  };

  /** Opens the notice's evidence, then resolves it: before the reminder is posted, or racing its send. */
  const resolveEvidence = async (notice: PlannedNotice, after: number) => {
    if (!notice.evidenceRef) return;
    const path = `/api/v1/evidence/${encodeURIComponent(notice.evidenceRef)}`;
    const opened = await limit(() => call('PUT', path, { kind: 'reconciliation_exception' }));
    if (opened.status >= 300) problems.push(`producer: opening evidence for #${notice.index} answered ${opened.status}`);
    await delay(after);
    const resolved = await limit(() => call('POST', `${path}/resolve`, { reason: 'chaos: exception cleared' }));
    if (resolved.status !== 200) problems.push(`producer: resolving evidence for #${notice.index} answered ${resolved.status}`);
    else stats.evidenceResolved += 1;
  };

  const schedule = async (notice: PlannedNotice) => {
    // Relative to the first post: negative resolves the evidence before the reminder exists.
    const resolveOffset = notice.resolveEvidenceOffsetMs;
    if (resolveOffset !== null && resolveOffset < 0) await resolveEvidence(notice, 0);
    let body: Record<string, unknown> | null = null;
    // Built when the first request actually goes out, and sent identically by the retry.
    const once = () => post(notice, () => (body ??= requestBody(notice, startedAt)));
    const first = once();
    const second =
      notice.retryAfterMs === 0
        ? once()
        : first.then(async () => {
            await delay(notice.retryAfterMs);
            return once();
          });
    const racingResolve = resolveOffset !== null && resolveOffset >= 0 ? first.then(() => resolveEvidence(notice, resolveOffset)) : Promise.resolve();
    // Awaited together: when the producer stops, every one of them rejects, and none unobserved.
    const [answers] = await Promise.all([Promise.all([first, second]), racingResolve]);
    const created = answers.filter((answer) => answer.created).length;
    if (created !== 1) {
      stats.createdTwice += created > 1 ? 1 : 0;
      problems.push(`producer: notice #${notice.index} created ${created} times over two identical requests`);
    }
    if (answers[0].jobId !== answers[1].jobId) {
      stats.jobIdMismatches += 1;
      problems.push(`producer: notice #${notice.index} got two job ids`);
    }
  };

  const ordered = [...planned].sort((a, b) => a.dueOffsetMs - b.dueOffsetMs);
  const done = Promise.all(ordered.map((notice) => schedule(notice))).then(() => undefined);
  return { done, stats, problems };
}
