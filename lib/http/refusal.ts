/**
 * The one refusal type of every HTTP surface, and the one table from refusal to status. A route
 * or a lib/ function that says no returns a Refusal; how it reads on the wire is the audience's
 * contract (lib/http/wire.ts), but its status is decided here and nowhere else.
 */
export const refusalStatus = {
  unauthenticated: 401,
  forbidden: 403,
  invalid_input: 400,
  not_found: 404,
  /** A link past its expiry: it existed and will not work again. */
  gone: 410,
  method_not_allowed: 405,
  conflict: 409,
  too_large: 413,
  unprocessable: 422,
  rate_limited: 429,
  not_configured: 503,
  unavailable: 503,
  internal: 500,
} as const;

export type RefusalKind = keyof typeof refusalStatus;

export type Refusal = {
  kind: RefusalKind;
  /** Words for a person: the console shows them as they are. */
  message: string;
  /** A more specific machine name than the kind (the producer API's `error`, e.g. `notice_conflict`). */
  code?: string;
  /** Structured detail for machines (the producer API's `details`): field issues, the conflicting job. */
  details?: unknown;
  headers?: Record<string, string>;
};

export type Result<T> = { ok: true; data: T } | { ok: false; refusal: Refusal };

export function ok<T>(data: T): { ok: true; data: T } {
  return { ok: true, data };
}

export function refuse(kind: RefusalKind, message: string, extra: Omit<Refusal, 'kind' | 'message'> = {}): { ok: false; refusal: Refusal } {
  return { ok: false, refusal: { kind, message, ...extra } };
}

export function statusOf(refusal: Refusal): number {
  return refusalStatus[refusal.kind];
}
