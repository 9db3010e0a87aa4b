import type { NoticeCategory } from '@/db/schema/states';
import type { LinkRefusal } from './one-click';

/**
 * The pages a recipient sees at a one-click link: plain HTML, no script, no external asset
 * (the route's CSP allows neither), readable on a phone. Every value is escaped.
 */

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escape(title)}</title>
<style>
  body { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328; background: #f6f8fa; margin: 0; }
  main { max-width: 32rem; margin: 12vh auto; background: #fff; border: 1px solid #d0d7de; border-radius: 8px; padding: 2rem; }
  h1 { font-size: 1.35rem; margin: 0 0 .75rem; }
  p { margin: 0 0 1rem; }
  .muted { color: #57606a; font-size: .9rem; }
  button { font: inherit; background: #1f6feb; color: #fff; border: 0; border-radius: 6px; padding: .6rem 1.2rem; cursor: pointer; }
  button:focus-visible { outline: 3px solid #0969da55; outline-offset: 2px; }
</style>
</head>
<body><main>${body}</main></body>
</html>`;
}

const requiredNote =
  '<p class="muted">Some notices are required by law (for example, a notice before a subscription renews and you are charged). Those still come: they cannot be unsubscribed from.</p>';

/** GET: what the link would do, and the button that does it (a POST of `List-Unsubscribe=One-Click` to this same URL). */
export function confirmPage({ masked, optedOut, category }: { masked: string; optedOut: boolean; category: NoticeCategory }): string {
  if (optedOut) {
    return layout(
      'You are unsubscribed',
      `<h1 data-testid="unsubscribe-done">You are already unsubscribed</h1><p>${escape(masked)} no longer receives courtesy reminders from us.</p>${requiredNote}`,
    );
  }
  return layout(
    'Unsubscribe',
    `<h1>Stop courtesy reminders?</h1>
<p>${escape(masked)} will no longer receive courtesy reminders by email.</p>
${category === 'required' ? '<p>The email this link came from was a notice required by law; notices like it will still be sent.</p>' : ''}
<form method="post">
  <input type="hidden" name="List-Unsubscribe" value="One-Click">
  <button type="submit" data-testid="unsubscribe-confirm">Unsubscribe</button>
</form>
${requiredNote}`,
  );
}

/** POST: done (also when it was done before: unsubscribing is idempotent). */
export function donePage({ masked }: { masked: string }): string {
  return layout(
    'You are unsubscribed',
    `<h1 data-testid="unsubscribe-done">You are unsubscribed</h1><p>${escape(masked)} will no longer receive courtesy reminders from us.</p>${requiredNote}`,
  );
}

const refusalText: Record<LinkRefusal, { title: string; text: string }> = {
  malformed: { title: 'This link is not valid', text: 'The link is incomplete or was changed. Open it again from the email, or copy the whole address.' },
  tampered: { title: 'This link is not valid', text: 'The link is incomplete or was changed. Open it again from the email, or copy the whole address.' },
  wrong_purpose: { title: 'This link is not an unsubscribe link', text: 'Open the unsubscribe link from the email.' },
  expired: {
    title: 'This link has expired',
    text: 'Unsubscribe links work for a year after the email was sent. Use the link in a more recent email, or reply to one.',
  },
  unknown_notice: {
    title: 'We could not find this email',
    text: 'The email this link came from is no longer on record. Use the link in a more recent email, or reply to one.',
  },
};

export function refusedPage(reason: LinkRefusal): string {
  const { title, text } = refusalText[reason];
  return layout(
    title,
    `<h1 data-testid="unsubscribe-refused" data-reason="${reason}">${escape(title)}</h1><p>${escape(text)}</p><p class="muted">Nothing was changed.</p>`,
  );
}

export function problemPage(title: string, text: string): string {
  return layout(title, `<h1 data-testid="unsubscribe-refused">${escape(title)}</h1><p>${escape(text)}</p><p class="muted">Nothing was changed.</p>`);
}
