import type { ActionResult } from '@/lib/auth/guard';

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** GET a console route and unwrap its ActionResult; refusals become ApiError with the server's words. */
export async function getJson<T>(url: string): Promise<T> {
  const response = await fetch(url, { cache: 'no-store', headers: { accept: 'application/json' } });
  if (response.status === 401) throw new ApiError('Your session ended. Sign in again.', 401);
  const body = (await response.json().catch(() => null)) as ActionResult<T> | null;
  if (!body) throw new ApiError(`The console answered ${response.status} without data. Retry; if it persists, check the console logs.`, response.status);
  if (!body.ok) throw new ApiError(body.error.message, response.status);
  return body.data;
}

export async function postJson<T>(url: string, payload: unknown): Promise<ActionResult<T>> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) });
  const body = (await response.json().catch(() => null)) as ActionResult<T> | null;
  return body ?? { ok: false, error: { code: 'invalid_input', message: `The console answered ${response.status}.` } };
}

export function toQueryString(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== '') search.set(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}
