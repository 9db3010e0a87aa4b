import { z } from 'zod';
import { oneClickContract } from '@/lib/http/contract';

/**
 * RFC 8058 one-click unsubscribe (lib/recipient/unsubscribe.ts builds the URI). A POST whose
 * body is `List-Unsubscribe=One-Click` unsubscribes and answers 200; a GET only shows a page with
 * a button that sends that POST, because link scanners and prefetchers follow GETs.
 */

/** The signed token as the path carries it; verified by lib/recipient/link.ts, not here. */
export const unsubscribeParams = z.strictObject({ token: z.string().max(512, 'not a notice link') });

/** Where the one-click links point; lib/recipient/unsubscribe.ts signs the token that follows. */
export const UNSUBSCRIBE_PATH = '/api/recipient/unsubscribe';

const page = z.string();

export const showUnsubscribe = oneClickContract({ method: 'GET', path: `${UNSUBSCRIBE_PATH}/{token}`, params: unsubscribeParams, output: page });

export const oneClickUnsubscribe = oneClickContract({ method: 'POST', path: `${UNSUBSCRIBE_PATH}/{token}`, params: unsubscribeParams, output: page });

export const oneClickRoutes = [showUnsubscribe, oneClickUnsubscribe] as const;
