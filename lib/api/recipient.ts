import { z } from 'zod';
import { recipientContract } from '@/lib/http/contract';
import { pageFlashes, type PageFlash } from '@/lib/recipient/render-page';

/**
 * The recipient link audience (`/r/{token}`): whoever holds a notice's signed link, no account,
 * no session. The page answers HTML; the two actions answer a redirect back to it for a form
 * post, or JSON for a client that asks for it (`Accept: application/json`).
 */

const flashNames = Object.keys(pageFlashes) as [PageFlash, ...PageFlash[]];

/** `?flash=` after a redirect; anything else is ignored rather than refused (a stale bookmark still opens the page). */
export const recipientPageRoute = recipientContract({
  method: 'GET',
  path: '/r/{token}',
  input: z.object({ flash: z.enum(flashNames).optional().catch(undefined) }),
  output: z.string(),
});

export const recipientCancelRoute = recipientContract({
  method: 'POST',
  path: '/r/{token}/cancel',
  input: z.object({ code: z.string().max(64).optional() }),
  output: z.discriminatedUnion('status', [
    z.object({ status: z.enum(['requested', 'already_requested']), requestedAt: z.iso.datetime({ offset: true }) }),
    z.object({ status: z.literal('redirect'), location: z.url() }),
  ]),
});

export const recipientPreferencesRoute = recipientContract({
  method: 'POST',
  path: '/r/{token}/preferences',
  input: z.object({ channel: z.enum(['email', 'sms']), state: z.enum(['opted_in', 'opted_out']) }),
  output: z.object({ channel: z.enum(['email', 'sms']), state: z.enum(['opted_in', 'opted_out']), changed: z.boolean() }),
});

export const recipientRoutes = [recipientPageRoute, recipientCancelRoute, recipientPreferencesRoute] as const;
