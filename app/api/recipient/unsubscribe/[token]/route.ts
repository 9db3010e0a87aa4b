import { getDb } from '@/lib/process-db';
import { oneClickUnsubscribe, showUnsubscribe } from '@/lib/api/one-click';
import { clientAddressOf } from '@/lib/auth/client-address';
import { config, recipientLinkKeys } from '@/lib/config';
import { readBytes } from '@/lib/http/body';
import { oneClickRoute, type OneClickAnswer } from '@/lib/http/one-click-route';
import { createLinkThrottle, type LinkThrottle } from '@/lib/recipient/link-throttle';
import { linkNoticeRef, verifyRecipientToken } from '@/lib/recipient/link';
import { maskAddress, readUnsubscribeLink, unsubscribeByLink, type LinkRefusal } from '@/lib/recipient/one-click';
import { confirmPage, donePage, problemPage, refusedPage } from '@/lib/recipient/one-click-pages';

export const dynamic = 'force-dynamic';

const refusalStatus: Record<LinkRefusal, OneClickAnswer['status']> = { malformed: 400, tampered: 400, wrong_purpose: 400, expired: 410, unknown_notice: 404 };
const BODY_LIMIT = 8 * 1024;

let throttle: LinkThrottle | undefined;

/** Verifies the token before anything else (a forged link costs no read and no write), then counts the request. */
async function admit(request: Request, token: string): Promise<OneClickAnswer | null> {
  const verdict = verifyRecipientToken({ keys: recipientLinkKeys(config()), token });
  if (!verdict.ok) return { status: refusalStatus[verdict.reason], html: refusedPage(verdict.reason) };
  if (verdict.purpose !== 'unsubscribe') return { status: 400, html: refusedPage('wrong_purpose') };
  throttle ??= createLinkThrottle(getDb().$client);
  const address = clientAddressOf({ forwardedFor: request.headers.get('x-forwarded-for'), trustedHops: config().TRUSTED_PROXY_HOPS });
  const limited = await throttle.take({ noticeKey: linkNoticeRef(verdict), address });
  if (limited) {
    return {
      status: 429,
      html: problemPage('Too many requests', 'Please wait a minute and try again.'),
      headers: { 'retry-after': String(Math.ceil(limited.retryInMs / 1000)) },
    };
  }
  return null;
}

const invalid = (message: string) => problemPage('This link is not valid', message);

export const GET = oneClickRoute(
  showUnsubscribe,
  async ({ db, request, params }) => {
    const refused = await admit(request, params.token);
    if (refused) return refused;
    const link = await readUnsubscribeLink(db, { token: params.token, keys: recipientLinkKeys(config()), now: new Date() });
    if (!link.ok) return { status: refusalStatus[link.reason], html: refusedPage(link.reason) };
    return { status: 200, html: confirmPage({ masked: maskAddress(link.recipient), optedOut: link.optedOut, category: link.category }) };
  },
  invalid,
);

/** The RFC 8058 body, `List-Unsubscribe=One-Click`, form-urlencoded or multipart/form-data; anything else changes nothing. */
async function isOneClickBody(request: Request): Promise<OneClickAnswer | null> {
  const type = (request.headers.get('content-type') ?? '').toLowerCase();
  const urlencoded = type.startsWith('application/x-www-form-urlencoded');
  if (!urlencoded && !type.startsWith('multipart/form-data')) {
    return { status: 415, html: problemPage('Not an unsubscribe request', 'Send List-Unsubscribe=One-Click as a form (RFC 8058).') };
  }
  const bytes = await readBytes(request, { limitBytes: BODY_LIMIT });
  if (!bytes.ok) return { status: 413, html: problemPage('Not an unsubscribe request', 'The request is too large.') };
  let value: FormDataEntryValue | string | null = null;
  if (urlencoded) {
    value = new URLSearchParams(bytes.data.toString('utf8')).get('List-Unsubscribe');
  } else {
    try {
      value = (await new Response(new Uint8Array(bytes.data), { headers: { 'content-type': type } }).formData()).get('List-Unsubscribe');
    } catch {
      value = null;
    }
  }
  if (value !== 'One-Click')
    return { status: 400, html: problemPage('Not an unsubscribe request', 'The form must carry List-Unsubscribe=One-Click (RFC 8058).') };
  return null;
}

export const POST = oneClickRoute(
  oneClickUnsubscribe,
  async ({ db, request, params }) => {
    const refused = (await admit(request, params.token)) ?? (await isOneClickBody(request));
    if (refused) return refused;
    const outcome = await unsubscribeByLink(db, { token: params.token, keys: recipientLinkKeys(config()), now: new Date() });
    if (!outcome.ok) return { status: refusalStatus[outcome.reason], html: refusedPage(outcome.reason) };
    return { status: 200, html: donePage({ masked: maskAddress(outcome.recipient) }) };
  },
  invalid,
);
