import type { z, ZodType } from 'zod';
import type { Db } from '@/db/client';
import { getDb } from '@/lib/process-db';
import { findRecipientNotice, type RecipientNotice } from '@/db/queries/recipient-notice';
import { clientAddressOf } from '@/lib/auth/client-address';
import { config, publicBaseUrl, recipientLinkKeys, type Config } from '@/lib/config';
import { recordRecipientAction } from '@/lib/evidence/recipient-evidence';
import { createLogger } from '@/lib/log';
import { linkNoticeRef, recipientLinkUrl, verifyRecipientToken } from '@/lib/recipient/link';
import { findLinkedNoticeKey, hasLinkExpired } from '@/lib/recipient/link-notice';
import { RECIPIENT_PAGE_PATH } from '@/lib/recipient/page-link';
import type { PageFlash } from '@/lib/api/recipient';
import { renderRefusalPage } from '@/lib/recipient/render-page';
import { createRecipientThrottle, type RecipientThrottle } from '@/lib/recipient/throttle';
import { activeNoticeConfig } from '@/lib/windows/active';
import type { NoticeType } from '@/lib/windows/load-config';
import { parseInput, readBytes } from './body';
import type { RecipientContract } from './contract';
import { refuse, statusOf, type Refusal, type Result } from './refusal';

const log = createLogger('recipient-link');

/** A form with a code, or a preference change: a few hundred bytes at most. */
const RECIPIENT_BODY_LIMIT = 4 * 1024;

export type RecipientHandlerContext<I extends ZodType> = {
  db: Db;
  input: z.output<I>;
  notice: RecipientNotice;
  /** The notice's configured type, or null for a type no longer configured. */
  type: NoticeType | null;
  throttle: RecipientThrottle;
  /** The page's own absolute URL on PUBLIC_BASE_URL (forms post below it, redirects return to it). */
  pageUrl: string;
};

/** A page (HTML), or an action's result: JSON for a client that asked, else 303 to `location` or back to the page with `flash`. */
export type RecipientAnswer<O extends ZodType> = { kind: 'page'; html: string } | { kind: 'done'; data: z.input<O>; flash?: PageFlash; location?: string };

export type RecipientRouteHandler = ((request: Request, context?: { params?: Promise<Record<string, string | string[]> | undefined> }) => Promise<Response>) & {
  contract: RecipientContract;
};

/** A refused form is answered by the page again with this flash instead of a refusal page: the customer can correct it. */
const formFlashes: Record<string, PageFlash> = { code_required: 'code_required', code_wrong: 'code_wrong' };

let processThrottle: { pool: Db['$client']; settings: Config; throttle: RecipientThrottle } | undefined;

/** The process's throttle, built again only when the pool or the configuration it was built from changes. */
function throttleOf(db: Db, settings: Config): RecipientThrottle {
  if (processThrottle?.pool === db.$client && processThrottle.settings === settings) return processThrottle.throttle;
  const throttle = createRecipientThrottle({
    pool: db.$client,
    limits: {
      perAddress: settings.RECIPIENT_ADDRESS_LIMIT,
      perNotice: settings.RECIPIENT_LINK_LIMIT,
      codeAttempts: settings.RECIPIENT_CODE_ATTEMPTS,
      windowMs: settings.RECIPIENT_LINK_WINDOW,
    },
  });
  processThrottle = { pool: db.$client, settings, throttle };
  return throttle;
}

const linkRefusals = {
  malformed: () => refuse('invalid_input', 'the link is malformed', { code: 'link_malformed' }),
  tampered: () => refuse('forbidden', 'the link signature does not match', { code: 'link_tampered' }),
  expired: () => refuse('gone', 'the link has expired', { code: 'link_expired' }),
} as const;

const securityHeaders = (formTargets: string[]) => ({
  'cache-control': 'no-store',
  // The token is in the URL: it must never travel to the merchant's site (or anywhere) in a Referer.
  'referrer-policy': 'no-referrer',
  'x-robots-tag': 'noindex, nofollow',
  'x-content-type-options': 'nosniff',
  'content-security-policy':
    `default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'; form-action 'self' ${formTargets.join(' ')}`.trim(),
});

function wantsJson(request: Request): boolean {
  const accept = request.headers.get('accept') ?? '';
  return accept.includes('application/json') && !accept.includes('text/html');
}

function htmlResponse(body: string, status: number, headers: Record<string, string> = {}): Response {
  return new Response(body, { status, headers: { 'content-type': 'text/html; charset=utf-8', ...securityHeaders([]), ...headers } });
}

function refusalResponse(request: Request, refusal: Refusal): Response {
  if (wantsJson(request)) {
    return Response.json(
      { ok: false, error: { code: refusal.code ?? refusal.kind, message: refusal.message } },
      { status: statusOf(refusal), headers: { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', ...refusal.headers } },
    );
  }
  return htmlResponse(renderRefusalPage(refusal), statusOf(refusal), refusal.headers);
}

/** A POST body as the form sent it (application/x-www-form-urlencoded) or as JSON. */
async function readForm<I extends ZodType>(request: Request, schema: I): Promise<Result<z.output<I>>> {
  const bytes = await readBytes(request, { limitBytes: RECIPIENT_BODY_LIMIT });
  if (!bytes.ok) return bytes;
  const text = bytes.data.toString('utf8');
  const type = (request.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  let raw: unknown;
  if (type === 'application/json') {
    try {
      raw = text.trim() === '' ? {} : JSON.parse(text);
    } catch {
      return refuse('invalid_input', 'the body is not valid JSON', { code: 'invalid_json' });
    }
  } else if (type === 'application/x-www-form-urlencoded' || type === '') {
    raw = Object.fromEntries(new URLSearchParams(text));
  } else {
    return refuse('invalid_input', 'send the form (application/x-www-form-urlencoded) or JSON', { code: 'unsupported_media_type' });
  }
  return parseInput(raw, schema);
}

/**
 * A recipient-link route from its contract. In order, before anything is read: the client
 * address's count (only behind TRUSTED_PROXY_HOPS), the token's signature and purpose (and a v1
 * token's expiry: HMAC, no database), the notice's count, then the notice itself (a compact
 * link's expiry is its notice's: lib/recipient/link-notice.ts), then the input, then the
 * handler. Every refusal is a page saying what happened and what to do (or JSON when asked),
 * with its status: 400 malformed, 403 tampered, 410 expired, 404 unknown notice, 429 too many.
 */
export function recipientRoute<I extends ZodType, O extends ZodType>(
  contract: RecipientContract<I, O>,
  handler: (context: RecipientHandlerContext<I>) => Promise<Result<RecipientAnswer<O>>>,
): RecipientRouteHandler {
  const route = async (request: Request, context?: { params?: Promise<Record<string, string | string[]> | undefined> }): Promise<Response> => {
    try {
      const db = getDb();
      const settings = config();
      const throttle = throttleOf(db, settings);
      const address = clientAddressOf({ forwardedFor: request.headers.get('x-forwarded-for'), trustedHops: settings.TRUSTED_PROXY_HOPS });
      if (address) {
        const admitted = await throttle.admitAddress(address);
        if (!admitted.ok) return refusalResponse(request, tooMany(admitted.retryInMs));
      }
      const params = (await context?.params) ?? {};
      const rawToken = params.token;
      const token = Array.isArray(rawToken) ? rawToken.join('/') : (rawToken ?? '');
      const verdict = verifyRecipientToken({ keys: recipientLinkKeys(settings), token });
      if (!verdict.ok) return refusalResponse(request, linkRefusals[verdict.reason]().refusal);
      // A signed one-click unsubscribe token is ours but not a page link.
      if (verdict.purpose !== 'page') return refusalResponse(request, linkRefusals.malformed().refusal);
      const admitted = await throttle.admitNotice(linkNoticeRef(verdict));
      if (!admitted.ok) return refusalResponse(request, tooMany(admitted.retryInMs));
      const noticeKey = await findLinkedNoticeKey(db, verdict);
      const notice = noticeKey ? await findRecipientNotice(db, { noticeKey }) : null;
      if (!notice) return refusalResponse(request, refuse('not_found', 'no notice for this link', { code: 'notice_unknown' }).refusal);
      if (hasLinkExpired(verdict, { anchorAt: notice.anchorAt, deadlineAt: notice.job.deadlineAt }, new Date())) {
        return refusalResponse(request, linkRefusals.expired().refusal);
      }
      const input =
        contract.method === 'GET' ? parseInput(Object.fromEntries(new URL(request.url).searchParams), contract.input) : await readForm(request, contract.input);
      const pageUrl = recipientLinkUrl(publicBaseUrl(settings), RECIPIENT_PAGE_PATH, token);
      if (!input.ok) return refusalResponse(request, input.refusal);
      const types = activeNoticeConfig().config.noticeTypes;
      const type = Object.hasOwn(types, notice.job.noticeType) ? (types[notice.job.noticeType] ?? null) : null;
      const result = await handler({ db, input: input.data, notice, type, throttle, pageUrl });
      const formTargets = type?.cancel?.redirect ? [new URL(type.cancel.redirect.replace(/\{[a-z0-9_]+\}/g, 'x')).origin] : [];
      if (!result.ok) {
        const flash = result.refusal.code ? formFlashes[result.refusal.code] : undefined;
        if (flash && !wantsJson(request)) return redirectTo(`${pageUrl}?flash=${flash}`);
        return refusalResponse(request, result.refusal);
      }
      const answer = result.data;
      // The customer's action in the notice's evidence record (lib/evidence/), with the address only behind TRUSTED_PROXY_HOPS.
      await recordRecipientAction(db, { notice: notice.job, path: contract.path, answer, address, userAgent: request.headers.get('user-agent') });
      if (answer.kind === 'page') return htmlResponse(answer.html, 200, securityHeaders(formTargets));
      if (wantsJson(request)) return Response.json({ ok: true, data: answer.data }, { status: 200, headers: { 'cache-control': 'no-store' } });
      return redirectTo(answer.location ?? `${pageUrl}${answer.flash ? `?flash=${answer.flash}` : ''}`);
    } catch (error) {
      log.error({ err: error instanceof Error ? error.message : String(error), path: contract.path }, 'recipient link request failed');
      return refusalResponse(request, { kind: 'internal', message: 'the request could not be completed' });
    }
  };
  return Object.assign(route, { contract });
}

function tooMany(retryInMs: number): Refusal {
  return {
    kind: 'rate_limited',
    message: 'too many requests for this link',
    code: 'rate_limited',
    headers: { 'retry-after': String(Math.ceil(retryInMs / 1000)) },
  };
}

/** Redirect after post: a reload of the answer is a GET of the page, never the action again. */
function redirectTo(location: string): Response {
  return new Response(null, { status: 303, headers: { location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' } });
}
