import { html, type Html } from '@/lib/recipient/html';
import type { EvidencePack } from '@/lib/api/evidence';
import { packSignedAt } from './pack';

/**
 * The pack for a person (and Stripe's `customer_communication`): the Stripe texts, the facts a
 * reviewer checks against Visa's list, the message as the customer received it (its HTML in a
 * sandboxed frame, no script, nothing fetched), the delivery events and the customer's actions,
 * and how to verify the JSON beside it. Every value escaped (lib/recipient/html.ts).
 */

const str = (value: unknown): string => (value === null || value === undefined ? '—' : typeof value === 'string' ? value : JSON.stringify(value));
const obj = (value: unknown): Record<string, unknown> =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
const list = (value: unknown): Record<string, unknown>[] => (Array.isArray(value) ? value.map(obj) : []);

function facts(rows: [string, unknown][]): Html {
  return html`<table>
    ${rows.map(
      ([label, value]) =>
        html`<tr>
          <th>${label}</th>
          <td>${str(value)}</td>
        </tr>`,
    )}
  </table>`;
}

export function renderEvidencePackHtml(pack: EvidencePack): string {
  const record = pack.record;
  const fact = obj(record.fact);
  const window = obj(record.window);
  const shown = obj(record.shown);
  const message = obj(pack.message);
  const body = html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width" />
        <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; frame-src 'self'" />
        <title>Evidence pack ${pack.noticeKey.slice(0, 32)}</title>
        <style>
          body {
            font:
              15px/1.5 system-ui,
              sans-serif;
            max-width: 960px;
            margin: 2rem auto;
            padding: 0 1rem;
          }
          th {
            text-align: left;
            padding-right: 1rem;
            vertical-align: top;
          }
          table {
            border-collapse: collapse;
            margin-bottom: 1rem;
          }
          td,
          th {
            border-bottom: 1px solid #ddd;
            padding: 0.25rem 0.5rem;
          }
          iframe {
            width: 100%;
            height: 600px;
            border: 1px solid #ccc;
          }
          pre {
            white-space: pre-wrap;
            background: #f6f6f6;
            padding: 0.5rem;
          }
        </style>
      </head>
      <body>
        <h1>Evidence pack</h1>
        <p>
          Notice <code>${pack.noticeKey}</code>, exported ${pack.exportedAt}. Signed head: ${packSignedAt(pack) ?? 'not yet signed'}.
          ${String(pack.entries.length)} signed entries${pack.unsignedEntries > 0 ? `, ${String(pack.unsignedEntries)} not yet signed` : ''}.
        </p>
        <h2>For Stripe</h2>
        ${facts([
          ['cancellation_policy_disclosure', pack.stripe.cancellation_policy_disclosure],
          ['cancellation_rebuttal', pack.stripe.cancellation_rebuttal],
          ['customer_communication', pack.stripe.customer_communication],
        ])}
        <h2>The business fact</h2>
        ${facts([
          ['Notice type', fact.noticeType],
          ['Category', fact.category],
          ['Event, revision', `${str(fact.eventId)}, ${str(fact.revision)}`],
          ['Identity (SHA-256)', fact.identityDigest],
          ['Anchor (charge)', fact.anchorAt],
        ])}
        <h2>What the notice showed</h2>
        ${facts([
          ['Cancel link', shown.cancelLink],
          ['Amount', `${str(shown.amount)} ${str(shown.currency)}`],
          ['Date', shown.date],
          ['Frequency', shown.frequency],
        ])}
        <h2>Why the window was what it was</h2>
        ${facts([
          ['Window', `${str(window.earliest)} … ${str(window.latest)}`],
          ['Rule set', window.ruleSetVersion],
          ['Quiet hours', window.quietHours],
        ])}
        <ul>
          ${list(window.rules).map((rule) => html`<li>${str(rule.id)}: ${str(rule.title)} — <a href="${str(rule.sourceUrl)}">${str(rule.sourceUrl)}</a></li>`)}
        </ul>
        <h2>Sending</h2>
        ${list(record.sending).map((sending) =>
          facts([
            ['Channel, recipient', `${str(sending.channel)} ${str(sending.recipient)}`],
            ['Claim committed', sending.claimCommittedAt],
            ['Sent', `${str(sending.sendStartedAt)} … ${str(sending.sendFinishedAt)}`],
            ['Outcome', sending.outcome],
            ['Provider id', sending.providerMessageId],
            ['Message-ID', sending.messageId],
          ]),
        )}
        <h2>The message as the customer received it</h2>
        ${
          message.subject !== undefined
            ? facts([
                ['Subject', message.subject],
                ['Template', `${str(message.templateId)} (${str(message.templateDigest)})`],
              ])
            : ''
        }
        ${typeof message.html === 'string' ? html`<iframe sandbox="" title="the notice's HTML" srcdoc="${message.html}"></iframe>` : ''}
        ${
          typeof message.text === 'string'
            ? html`<h3>Text part</h3>
                <pre>${message.text}</pre>`
            : ''
        }
        ${
          typeof message.smsBody === 'string'
            ? html`<h3>Text message</h3>
                <pre>${message.smsBody}</pre>`
            : ''
        }
        <h2>Delivery</h2>
        <ul>
          ${list(record.delivery).map((event) => html`<li>${str(event.occurredAt)}: ${str(event.provider)} ${str(event.type)} (${str(event.rawType)})</li>`)}
        </ul>
        <h2>The customer's actions</h2>
        <ul>
          ${list(record.customer).map((action) => html`<li>${str(action.at)}: ${str(action.kind)} from ${str(action.clientAddress)} (${str(action.userAgent)}) ${action.result === undefined ? '' : str(action.result)}</li>`)}
        </ul>
        <h2>Ledger history</h2>
        <ul>
          ${list(record.ledger).map((entry) => html`<li>${str(entry.at)}: ${str(entry.by)} ${str(entry.action)} by ${str(entry.actor)}: ${str(entry.reason)}</li>`)}
        </ul>
        <h2>Verifying</h2>
        <p>
          The JSON pack beside this page carries every entry, its inclusion path to a signed chain head, the Ed25519 signature and any RFC 3161 time-stamp.
          Check it with <code>npm run ledger -- evidence verify &lt;file&gt;</code>; the public keys are at <a href="${pack.keysUrl}">${pack.keysUrl}</a>.
        </p>
      </body>
    </html>`;
  return body.html;
}
