import { z, type ZodType } from 'zod';
import type { ApiTokenScope } from '@/db/schema/states';
import type { Permission } from '@/lib/auth/permissions';
import type { WebhookProvider } from '@/lib/api/fields';

/**
 * What a route is, apart from what it does: its method and path, who may call it, and the zod
 * schemas of what it takes and what it answers. A contract is plain data with no server code,
 * so the console's components and the server's prefetch use the same one the handler is built
 * from (lib/http/console-route.ts, producer-route.ts, …), and tests walk them (lib/http/routes.ts).
 */

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH';

type Common = {
  method: Method;
  /** As the URL reads, dynamic segments in braces: `/api/v1/reminders/{id}/cancel`. */
  path: string;
};

export type ConsoleContract<I extends ZodType = ZodType, O extends ZodType = ZodType> = Common & {
  audience: 'console';
  permission: Permission;
  /** The query (GET) or the JSON body (POST). */
  input: I;
  /** `data` of the `{ ok: true, data }` answer; for a `csv` route, the file. */
  output: O;
  status: 200 | 201 | 202;
  format: 'json' | 'csv';
  /** A POST body larger than the default (lib/http/body.ts), e.g. an uploaded replay list. */
  bodyLimitBytes?: number;
  /** The body's `csv` member is a replay upload, streamed through its validator (lib/replay/upload-body.ts) instead of read whole. */
  streamsUpload?: boolean;
};

export type ProducerContract<P extends ZodType = ZodType, B extends ZodType = ZodType, O extends ZodType = ZodType> = Common & {
  audience: 'producer';
  /** The token scope the route needs; a token without it is refused 403 before the body is read. */
  scope: ApiTokenScope;
  params: P;
  /** The JSON body; for a GET, the query string. */
  body: B;
  /** An empty body is `{}` (cancel, resolve); otherwise a JSON body is required. */
  bodyOptional: boolean;
  /** A body larger than the default (lib/http/body.ts): a batch. */
  bodyLimitBytes?: number;
  output: O;
};

export type ProviderContract<I extends ZodType = ZodType, O extends ZodType = ZodType> = Common & {
  audience: 'provider';
  provider: WebhookProvider;
  /** The provider's documented payload, as its parser reads it (after authentication). */
  input: I;
  output: O;
};

export type ScrapeContract<O extends ZodType = ZodType> = Common & { audience: 'scrape'; input: ZodType; output: O };

/** Answered to anyone, without authentication: liveness and readiness probes. They read no session and reveal no data. */
export type PublicContract<O extends ZodType = ZodType> = Common & { audience: 'public'; input: ZodType; output: O };

/**
 * A link in a notice that its recipient (or their mailbox provider) follows: RFC 8058 one-click
 * unsubscribe. No session and no credentials (RFC 8058 forbids cookies and authorization on the
 * POST): the signed token in the path is the only authority. Answers a small HTML page.
 */
export type OneClickContract<P extends ZodType = ZodType, O extends ZodType = ZodType> = Common & { audience: 'one_click'; params: P; output: O };

/**
 * Whoever holds a notice's signed link (lib/recipient/link.ts): the token in the path is the only
 * credential. `input` is the query (GET) or the form / JSON body (POST).
 */
export type RecipientContract<I extends ZodType = ZodType, O extends ZodType = ZodType> = Common & { audience: 'recipient'; input: I; output: O };

export type RouteContract = ConsoleContract | ProducerContract | ProviderContract | ScrapeContract | PublicContract | OneClickContract | RecipientContract;

/** Nothing in, for a GET without parameters: unknown query names are ignored, as before. */
export const noInput = z.object({});

export function consoleContract<I extends ZodType, O extends ZodType>(
  contract: Omit<ConsoleContract<I, O>, 'audience' | 'status' | 'format'> & Partial<Pick<ConsoleContract<I, O>, 'status' | 'format'>>,
): ConsoleContract<I, O> {
  return { audience: 'console', status: 200, format: 'json', ...contract };
}

export function producerContract<P extends ZodType, B extends ZodType, O extends ZodType>(
  contract: Omit<ProducerContract<P, B, O>, 'audience' | 'bodyOptional'> & { bodyOptional?: boolean },
): ProducerContract<P, B, O> {
  return { audience: 'producer', bodyOptional: false, ...contract };
}

export function providerContract<I extends ZodType, O extends ZodType>(contract: Omit<ProviderContract<I, O>, 'audience' | 'method'>): ProviderContract<I, O> {
  return { audience: 'provider', method: 'POST', ...contract };
}

export function scrapeContract<O extends ZodType>(contract: Omit<ScrapeContract<O>, 'audience' | 'method' | 'input'>): ScrapeContract<O> {
  return { audience: 'scrape', method: 'GET', input: noInput, ...contract };
}

export function publicContract<O extends ZodType>(contract: Omit<PublicContract<O>, 'audience' | 'method' | 'input'>): PublicContract<O> {
  return { audience: 'public', method: 'GET', input: noInput, ...contract };
}

export function oneClickContract<P extends ZodType, O extends ZodType>(contract: Omit<OneClickContract<P, O>, 'audience'>): OneClickContract<P, O> {
  return { audience: 'one_click', ...contract };
}

export function recipientContract<I extends ZodType, O extends ZodType>(contract: Omit<RecipientContract<I, O>, 'audience'>): RecipientContract<I, O> {
  return { audience: 'recipient', ...contract };
}

/** A CSV download: the file and the name the browser saves it under. */
export const csvFile = z.object({ filename: z.string(), csv: z.string() });

/** The console's wire format around a contract's output. */
export function consoleEnvelope<O extends ZodType>(output: O) {
  return z.discriminatedUnion('ok', [
    z.object({ ok: z.literal(true), data: output }),
    z.object({ ok: z.literal(false), error: z.object({ code: z.string(), message: z.string() }) }),
  ]);
}
