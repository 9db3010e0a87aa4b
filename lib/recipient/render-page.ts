import type { PageFlash } from '@/lib/api/recipient';
import type { Refusal } from '@/lib/http/refusal';
import { html, type Html } from './html';
import type { PreferenceRow, RecipientPageView } from './notice-view';

/**
 * The recipient page, its confirmations and its refusals as whole HTML documents. Small inline
 * CSS, readable from 320 px up, no script; every form posts and is answered with a redirect back
 * here (lib/http/recipient-route.ts), so a reload never repeats an action.
 */

export const pageFlashes = {
  cancel_requested: { tone: 'good', text: 'Your cancellation request has been recorded. The company will confirm the cancellation with you.' },
  cancel_already: { tone: 'good', text: 'You had already asked to cancel; your first request stands and nothing else changed.' },
  preferences_saved: { tone: 'good', text: 'Your preferences have been saved.' },
  code_required: { tone: 'bad', text: 'Type the confirmation code from the email to cancel.' },
  code_wrong: { tone: 'bad', text: 'That confirmation code does not match this notice. Check the email and try again; nothing was changed.' },
} as const satisfies Record<PageFlash, { tone: 'good' | 'bad'; text: string }>;

const style = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1e293b;background:#f1f5f9}
main{max-width:36rem;margin:0 auto;padding:1.5rem 1rem 3rem}
.card{background:#fff;border:1px solid #e2e8f0;border-radius:12px;padding:1.25rem 1.25rem 1.5rem;margin-top:1rem;box-shadow:0 1px 2px rgba(15,23,42,.05)}
.eyebrow{margin:0;color:#64748b;font-size:.85rem;text-transform:uppercase;letter-spacing:.04em}
h1{font-size:1.5rem;line-height:1.25;margin:.25rem 0 1rem}
h2{font-size:1.1rem;margin:0 0 .5rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.35rem 1rem;margin:0}
dt{color:#64748b}
dd{margin:0;font-weight:500}
p{margin:.5rem 0}
.muted{color:#64748b;font-size:.9rem}
.flash{border-radius:8px;padding:.75rem 1rem;margin-top:1rem;font-weight:500}
.flash.good{background:#ecfdf5;color:#065f46;border:1px solid #a7f3d0}
.flash.bad{background:#fef2f2;color:#991b1b;border:1px solid #fecaca}
form{margin:.75rem 0 0}
label{display:block;font-weight:500;margin-bottom:.25rem}
input[type=text]{width:100%;max-width:16rem;font:inherit;font-family:ui-monospace,monospace;letter-spacing:.08em;padding:.55rem .7rem;border:1px solid #cbd5e1;border-radius:8px;text-transform:uppercase}
button{font:inherit;font-weight:600;border-radius:8px;padding:.6rem 1rem;border:1px solid transparent;cursor:pointer;margin-top:.5rem}
.danger{background:#b91c1c;color:#fff}
.secondary{background:#fff;color:#1e293b;border-color:#cbd5e1}
.pref{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:.5rem;padding:.75rem 0;border-top:1px solid #e2e8f0}
.pref:first-of-type{border-top:0}
.pref form{margin:0}
.pref button{margin:0}
.state{font-size:.85rem;font-weight:600;border-radius:999px;padding:.1rem .6rem}
.state.on{background:#ecfdf5;color:#065f46}
.state.off{background:#f1f5f9;color:#475569}
.state.required{background:#eff6ff;color:#1e40af}
footer{margin-top:1.5rem;color:#64748b;font-size:.85rem;text-align:center}
@media (max-width:420px){dl{grid-template-columns:1fr;gap:0}dt{font-size:.85rem;margin-top:.5rem}dt:first-child{margin-top:0}}
`;

function documentOf({ title, body }: { title: string; body: Html }): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex, nofollow" />
        <meta name="referrer" content="no-referrer" />
        <title>${title}</title>
        <style>
          ${{ html: style }}
        </style>
      </head>
      <body>
        <main>
          ${body}
          <footer>This page belongs to one notice and needs no account. Questions? Reply to the email or contact the company that sent it.</footer>
        </main>
      </body>
    </html> `.html;
}

function details(view: RecipientPageView): Html {
  const rows: [string, string | null][] = [
    ['Plan', view.plan],
    ['Amount', view.amount],
    ['Charge date', view.chargeAt],
    ['Notice due', view.window],
    ['Times shown in', view.timeZone],
  ];
  return html`<dl data-testid="notice-details">
    ${rows
      .filter((row): row is [string, string] => row[1] !== null)
      .map(
        ([label, value]) =>
          html`<dt>${label}</dt>
            <dd>${value}</dd>`,
      )}
  </dl>`;
}

function cancelSection(view: RecipientPageView, actions: { cancel: string }): Html | null {
  const offer = view.cancel;
  if (offer.kind === 'none') return null;
  if (offer.kind === 'request' && offer.requestedAt) {
    return html`<section class="card" id="cancel" data-testid="cancel-section">
      <h2>Cancel the renewal</h2>
      <p data-testid="cancel-requested">
        You asked to cancel on <strong>${offer.requestedAt}</strong>. The company has your request; there is nothing more to do here.
      </p>
    </section>`;
  }
  const code = offer.requiresCode
    ? html`<label for="code">Confirmation code from the email</label>
        <input
          type="text"
          id="code"
          name="code"
          autocomplete="one-time-code"
          inputmode="text"
          maxlength="32"
          required
          spellcheck="false"
          data-testid="code-input"
        />`
    : null;
  const explain =
    offer.kind === 'redirect'
      ? html`<p>You will continue on <strong>${offer.host}</strong>, where you can cancel your subscription.</p>`
      : html`<p>We will pass your request to the company, which cancels the subscription before the charge and confirms it with you.</p>`;
  return html`<section class="card" id="cancel" data-testid="cancel-section">
    <h2>Cancel the renewal</h2>
    ${explain}
    <form method="post" action="${actions.cancel}">
      ${code}
      <div>
        <button type="submit" class="danger" data-testid="cancel-button">${offer.kind === 'redirect' ? 'Continue to cancel' : 'Cancel the renewal'}</button>
      </div>
    </form>
  </section>`;
}

function preferenceRow(row: PreferenceRow, action: string): Html {
  const on = row.state === 'opted_in';
  const channel = row.channel === 'email' ? 'email' : 'text message';
  return html`<div class="pref" data-testid="preference-${row.channel}">
    <div>
      <strong>Reminders by ${channel}</strong> <span class="muted">${row.address}</span><br /><span
        class="state ${on ? 'on' : 'off'}"
        data-testid="preference-${row.channel}-state"
        >${on ? 'On' : 'Off'}</span
      >
    </div>
    <form method="post" action="${action}">
      <input type="hidden" name="channel" value="${row.channel}" />
      <input type="hidden" name="state" value="${on ? 'opted_out' : 'opted_in'}" />
      <button type="submit" class="secondary" data-testid="preference-${row.channel}-toggle">${on ? 'Turn off' : 'Turn back on'}</button>
    </form>
  </div>`;
}

function preferencesSection(view: RecipientPageView, actions: { preferences: string }): Html {
  const required =
    view.category === 'required'
      ? html`<div class="pref" data-testid="preference-required">
          <div><strong>This notice</strong><br /><span class="state required">Required by law</span></div>
          <p class="muted" data-testid="required-reason">It cannot be unsubscribed: ${view.requiredReason ?? ''}</p>
        </div>`
      : null;
  return html`<section class="card" id="preferences" data-testid="preferences-section">
    <h2>Your preferences</h2>
    <p class="muted">Courtesy reminders, such as renewal reminders, can be turned off. Notices the law requires are always sent.</p>
    ${view.preferences.map((row) => preferenceRow(row, actions.preferences))} ${required}
  </section>`;
}

export function renderRecipientPage({
  view,
  flash,
  actions,
}: {
  view: RecipientPageView;
  flash: PageFlash | null;
  actions: { cancel: string; preferences: string };
}): string {
  const message = flash ? pageFlashes[flash] : null;
  return documentOf({
    title: view.title,
    body: html`<div class="card" data-testid="notice-card">
        <p class="eyebrow">${view.typeLabel}</p>
        <h1>${view.title}</h1>
        ${details(view)}
        ${message ? html`<div class="flash ${message.tone}" role="status" data-testid="flash" data-flash="${flash ?? ''}">${message.text}</div>` : null}
      </div>
      ${cancelSection(view, actions)} ${preferencesSection(view, actions)}`,
  });
}

/** What each refusal of a link means to the customer, and what they can do. */
const refusalWords: Partial<Record<Refusal['kind'], { title: string; text: string }>> = {
  invalid_input: {
    title: 'This link is incomplete',
    text: 'The link looks cut off or damaged. Open it again from the email, or copy the whole link into your browser.',
  },
  forbidden: {
    title: 'This link does not work',
    text: 'The link was changed after it was sent, so it cannot be trusted. Open it again from the original email.',
  },
  gone: {
    title: 'This link has expired',
    text: 'Links in a notice work until the date the notice is about. To cancel or change anything now, contact the company directly.',
  },
  not_found: {
    title: 'We could not find this notice',
    text: 'The notice this link belongs to is no longer on file. Contact the company that sent you the email.',
  },
  rate_limited: { title: 'Too many attempts', text: 'This link has been used too often in a short time. Wait a few minutes and try again.' },
  unprocessable: { title: 'This cannot be done here', text: 'Contact the company that sent you the email.' },
};

export function renderRefusalPage(refusal: Refusal): string {
  const words = refusalWords[refusal.kind] ?? {
    title: 'Something went wrong',
    text: 'We could not complete this. Try again later, or contact the company that sent you the email.',
  };
  return documentOf({
    title: words.title,
    body: html`<div class="card" data-testid="refusal" data-kind="${refusal.kind}">
      <p class="eyebrow">Notice link</p>
      <h1>${words.title}</h1>
      <p>${words.text}</p>
      ${refusal.kind === 'unprocessable' ? html`<p class="muted">${refusal.message}</p>` : null}
      <p class="muted">Nothing was changed.</p>
    </div>`,
  });
}
