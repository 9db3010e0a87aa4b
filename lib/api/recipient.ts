import { z } from 'zod';
import { recipientContract } from '@/lib/http/contract';

/**
 * The recipient link audience (`/r/{token}`): whoever holds a notice's signed link, no account,
 * no session. The page answers HTML; the two actions answer a redirect back to it for a form
 * post, or JSON for a client that asks for it (`Accept: application/json`).
 */

/** What the page confirms or refuses after a redirect (`?flash=`); lib/recipient/render-page.ts words each. */
export const pageFlashNames = ['cancel_requested', 'cancel_already', 'preferences_saved', 'code_required', 'code_wrong'] as const;
export type PageFlash = (typeof pageFlashNames)[number];

/** `?flash=` after a redirect; anything else is ignored rather than refused (a stale bookmark still opens the page). */
export const recipientPageRoute = recipientContract({
  method: 'GET',
  path: '/r/{token}',
  input: z.object({ flash: z.enum(pageFlashNames).optional().catch(undefined) }),
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
