/**
 * Plain-text and HTML bodies per notice type, from the job's compact payload. Only the
 * fields listed here are read; anything else in the payload is ignored, and every value is
 * escaped in the HTML part.
 */
export type RenderInput = {
  noticeType: string;
  payload: Record<string, unknown>;
  oneTimeCode: string;
  cancelUrl: string;
};

export type RenderedMail = { subject: string; text: string; html: string };

function field(payload: Record<string, unknown>, name: string, fallback: string): string {
  const value = payload[name];
  if (typeof value === 'string' && value.trim() !== '') return value.trim().slice(0, 200);
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return fallback;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char] ?? char);
}

type Body = { subject: string; lines: string[] };

/**
 * By configured notice type name. The four required types have plain interim bodies until
 * templates are the operator's (the next issue); an unknown type still refuses to render.
 */
const bodies: Record<string, (payload: Record<string, unknown>) => Body> = {
  renewal_notice_t72: (payload) => renewal(payload, '3 days'),
  renewal_notice_t24: (payload) => renewal(payload, 'tomorrow'),
  payment_recovery: (payload) => ({
    subject: 'Action needed: we could not reconcile a payment',
    lines: [
      `Hello ${field(payload, 'customer_name', 'there')},`,
      `We could not match a payment of ${field(payload, 'amount', 'an amount')} ${field(payload, 'currency', '')} to your account.`.replace(/\s+\./, '.'),
      'Please review it from your account page.',
    ],
  }),
  auto_renewal_notice: (payload) => required(payload, 'will renew automatically', 'You can cancel online before the renewal date to avoid the charge.'),
  trial_conversion_notice: (payload) =>
    required(payload, 'trial or promotional price is ending', 'After it ends you will be charged the regular price unless you cancel online before then.'),
  price_change_notice: (payload) => required(payload, 'price is changing', 'You can cancel online before the new price takes effect.'),
  pre_debit_notice: (payload) => required(payload, 'will be debited', 'You can opt out of this mandate from your bank or card app.'),
};

function required(payload: Record<string, unknown>, what: string, action: string): Body {
  const plan = field(payload, 'plan_name', 'your subscription');
  return {
    subject: `Your ${plan} ${what}`,
    lines: [
      `Hello ${field(payload, 'customer_name', 'there')},`,
      `Your ${plan} ${what}: ${field(payload, 'amount', 'the plan price')} ${field(payload, 'currency', '')} on ${field(payload, 'charge_date', 'its renewal date')}.`.replace(
        /\s+on/,
        ' on',
      ),
      action,
    ],
  };
}

function renewal(payload: Record<string, unknown>, when: string): Body {
  const plan = field(payload, 'plan_name', 'your subscription');
  return {
    subject: `Your ${plan} renews ${when === 'tomorrow' ? 'tomorrow' : `in ${when}`}`,
    lines: [
      `Hello ${field(payload, 'customer_name', 'there')},`,
      `Your ${plan} renews on ${field(payload, 'charge_date', 'its renewal date')} for ${field(payload, 'amount', 'the plan price')} ${field(payload, 'currency', '')}.`.replace(
        /\s+\./,
        '.',
      ),
      'If you do not want to renew, you can cancel before then.',
    ],
  };
}

export function renderNotice({ noticeType, payload, oneTimeCode, cancelUrl }: RenderInput): RenderedMail {
  const render = Object.hasOwn(bodies, noticeType) ? bodies[noticeType] : undefined;
  if (!render) throw new Error(`no template for notice type ${noticeType.slice(0, 64)}`);
  const body = render(payload);
  const codeLine = `Your confirmation code: ${oneTimeCode}`;
  const text = [...body.lines, '', codeLine, `Cancel: ${cancelUrl}`, ''].join('\n');
  const html = [
    '<!doctype html><html><body>',
    ...body.lines.map((line) => `<p>${escapeHtml(line)}</p>`),
    `<p>Your confirmation code: <strong>${escapeHtml(oneTimeCode)}</strong></p>`,
    `<p><a href="${escapeHtml(cancelUrl)}">Cancel</a></p>`,
    '</body></html>',
  ].join('\n');
  return { subject: body.subject, text, html };
}
