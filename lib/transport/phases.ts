/**
 * Where a send failed decides what it means, for every transport (DESIGN.md "Outcomes of the
 * send"; the same table is in ARCHITECTURE.md, and `lib/transport/phases.test.ts` fails when
 * either changes without the other):
 *
 * - `nothing_left`: the message definitely did not leave (no connection, no greeting, a
 *   temporary refusal before the body). Release the claim and retry; never quarantine.
 * - `recipient_refused`: the relay or Twilio refused this recipient or this message for good.
 *   Permanent `failed`, plus a suppression where the answer says so (550 5.1.1, 21610).
 * - `config_broken`: our credentials or sender are refused. Not the recipient's fault: never
 *   `failed`, the claim is released without counting an attempt, the transport pauses.
 * - `outcome_unknown`: the body (SMTP: everything after DATA's 354) or the HTTP request was
 *   sent and no final answer came. The only class that keeps the claim (quarantine).
 *
 * Only after 354 can an SMTP relay hold a message; only once the request was written can Twilio
 * have created one. Every earlier failure is `nothing_left`, whatever it looks like.
 */

/** Every transport of the registry (lib/channels/registry.ts): SMTP, Twilio and the HTTP email providers. */
export type TransportName = 'smtp' | 'twilio' | 'postmark' | 'ses' | 'sendgrid';

export type FailureClass = 'nothing_left' | 'recipient_refused' | 'config_broken' | 'outcome_unknown';

/** SMTP: dns…body (body = after 354, until the final reply). HTTP: dns…tls, then the request written, then its answer. */
export type Phase = 'dns' | 'connect' | 'tls' | 'greeting' | 'ehlo' | 'auth' | 'mail_from' | 'rcpt_to' | 'data' | 'body' | 'request' | 'response';

/**
 * One row: at this phase, this answer (a reply code, a class of codes, or none at all) means
 * this. The most specific answer wins: an exact code, then `4xx`/`5xx`, then `any reply`.
 */
export type PhaseRow = { transport: TransportName; phase: Phase; answer: string; failure: FailureClass; example: string };

export const phaseTable: readonly PhaseRow[] = [
  { transport: 'smtp', phase: 'dns', answer: 'no answer', failure: 'nothing_left', example: 'ENOTFOUND, EAI_AGAIN' },
  { transport: 'smtp', phase: 'connect', answer: 'no answer', failure: 'nothing_left', example: 'ECONNREFUSED, connect timeout' },
  { transport: 'smtp', phase: 'tls', answer: 'no answer', failure: 'nothing_left', example: 'handshake failed, bad certificate' },
  { transport: 'smtp', phase: 'greeting', answer: 'no answer', failure: 'nothing_left', example: 'no 220 in time, closed' },
  { transport: 'smtp', phase: 'greeting', answer: 'any reply', failure: 'nothing_left', example: '421, 554 instead of 220' },
  { transport: 'smtp', phase: 'ehlo', answer: 'no answer', failure: 'nothing_left', example: 'closed during EHLO or STARTTLS' },
  { transport: 'smtp', phase: 'ehlo', answer: 'any reply', failure: 'nothing_left', example: 'EHLO or STARTTLS refused' },
  { transport: 'smtp', phase: 'auth', answer: 'no answer', failure: 'nothing_left', example: 'timeout during AUTH' },
  { transport: 'smtp', phase: 'auth', answer: '4xx', failure: 'nothing_left', example: '454 temporary authentication failure' },
  { transport: 'smtp', phase: 'auth', answer: '5xx', failure: 'config_broken', example: '535 credentials invalid, 534, 538' },
  { transport: 'smtp', phase: 'mail_from', answer: 'no answer', failure: 'nothing_left', example: 'closed, timeout' },
  { transport: 'smtp', phase: 'mail_from', answer: '4xx', failure: 'nothing_left', example: '451, 452' },
  { transport: 'smtp', phase: 'mail_from', answer: '530', failure: 'config_broken', example: '530 authentication required' },
  { transport: 'smtp', phase: 'mail_from', answer: '5xx', failure: 'config_broken', example: '550 5.7.1 sender not allowed (MAIL_FROM)' },
  { transport: 'smtp', phase: 'rcpt_to', answer: 'no answer', failure: 'nothing_left', example: 'closed, timeout' },
  { transport: 'smtp', phase: 'rcpt_to', answer: '4xx', failure: 'nothing_left', example: '451 try again later, 450 greylisted' },
  { transport: 'smtp', phase: 'rcpt_to', answer: '530', failure: 'config_broken', example: '530 authentication required' },
  { transport: 'smtp', phase: 'rcpt_to', answer: '5xx', failure: 'recipient_refused', example: '550 5.1.1 user unknown (suppressed), 554' },
  { transport: 'smtp', phase: 'data', answer: 'no answer', failure: 'nothing_left', example: 'closed before 354' },
  { transport: 'smtp', phase: 'data', answer: '4xx', failure: 'nothing_left', example: '451 instead of 354' },
  { transport: 'smtp', phase: 'data', answer: '5xx', failure: 'recipient_refused', example: '554 no valid recipients' },
  { transport: 'smtp', phase: 'body', answer: 'no answer', failure: 'outcome_unknown', example: 'dropped or timed out after the body' },
  { transport: 'smtp', phase: 'body', answer: '4xx', failure: 'nothing_left', example: '451 after the final dot' },
  { transport: 'smtp', phase: 'body', answer: '5xx', failure: 'recipient_refused', example: '554 5.7.1 rejected as spam' },
  { transport: 'twilio', phase: 'dns', answer: 'no answer', failure: 'nothing_left', example: 'ENOTFOUND' },
  { transport: 'twilio', phase: 'connect', answer: 'no answer', failure: 'nothing_left', example: 'ECONNREFUSED' },
  { transport: 'twilio', phase: 'tls', answer: 'no answer', failure: 'nothing_left', example: 'handshake failed' },
  { transport: 'twilio', phase: 'response', answer: 'no answer', failure: 'outcome_unknown', example: 'timeout or reset after the POST' },
  { transport: 'twilio', phase: 'response', answer: 'HTTP 401', failure: 'config_broken', example: '20003 authenticate' },
  { transport: 'twilio', phase: 'response', answer: 'HTTP 403', failure: 'config_broken', example: 'account suspended' },
  { transport: 'twilio', phase: 'response', answer: 'error 20003', failure: 'config_broken', example: 'authenticate' },
  { transport: 'twilio', phase: 'response', answer: 'error 21212', failure: 'config_broken', example: "invalid 'From' (TWILIO_FROM)" },
  { transport: 'twilio', phase: 'response', answer: 'error 21606', failure: 'config_broken', example: "'From' cannot send SMS" },
  { transport: 'twilio', phase: 'response', answer: 'HTTP 429', failure: 'nothing_left', example: '20429 too many requests' },
  { transport: 'twilio', phase: 'response', answer: 'HTTP 5xx', failure: 'nothing_left', example: '500, 503' },
  { transport: 'twilio', phase: 'response', answer: 'documented refusal', failure: 'recipient_refused', example: '21211, 21610 (opt-out), 21614, …' },
  { transport: 'twilio', phase: 'response', answer: 'other 4xx', failure: 'nothing_left', example: 'an error not listed: retried' },
];

/**
 * The row of `rows` for this transport, phase and the first answer that has one (most specific
 * first). The HTTP email providers keep their rows beside their code (lib/channels/<name>/phases.ts).
 */
export function phaseRowFor(rows: readonly PhaseRow[], transport: TransportName, phase: Phase, answers: readonly string[]): PhaseRow {
  for (const answer of answers) {
    const row = rows.find((candidate) => candidate.transport === transport && candidate.phase === phase && candidate.answer === answer);
    if (row) return row;
  }
  // A phase the table has no row for is treated as the body's: never guess that nothing left.
  return { transport, phase, answer: answers[0] ?? 'no answer', failure: 'outcome_unknown', example: 'not in the table' };
}

function rowFor(transport: TransportName, phase: Phase, answers: readonly string[]): PhaseRow {
  return phaseRowFor(phaseTable, transport, phase, answers);
}

/** An SMTP failure at `phase` with the relay's reply code, or null when no reply came. */
export function classifySmtpPhase(phase: Phase, code: number | null): FailureClass {
  if (code === null) return rowFor('smtp', phase, ['no answer']).failure;
  return rowFor('smtp', phase, [String(code), `${Math.floor(code / 100)}xx`, 'any reply']).failure;
}

/**
 * Twilio's documented refusals of this recipient or this message: sending again cannot help.
 * Anything else in 4xx that is not about our account is retried (`other 4xx`).
 */
export const twilioRecipientCodes: ReadonlySet<number> = new Set([
  21211, // invalid 'To' phone number
  21408, // permission to send to this region is not enabled
  21610, // the recipient replied STOP
  21612, // the 'To' number cannot be reached by this sender
  21614, // 'To' is not a mobile number
  21617, // the body exceeds 1600 characters
  21635, // 'To' cannot be a landline
  30004, // message blocked
  30006, // landline or unreachable carrier
]);

/** A Twilio failure: `status` null when no HTTP answer came (then `phase` says whether the request had left). */
export function classifyTwilioPhase(phase: Phase, status: number | null, code: number | null): FailureClass {
  if (status === null) return rowFor('twilio', phase, ['no answer']).failure;
  const answers = [
    ...(code !== null && twilioRecipientCodes.has(code) ? ['documented refusal'] : []),
    ...(code !== null ? [`error ${code}`] : []),
    `HTTP ${status}`,
    `HTTP ${Math.floor(status / 100)}xx`,
    'other 4xx',
  ];
  return rowFor('twilio', phase, answers).failure;
}

/** The table as ARCHITECTURE.md shows it (checked by the test, so the two cannot drift). */
export function phaseTableMarkdown(rows: readonly PhaseRow[] = phaseTable): string {
  const lines = ['| transport | phase | answer | class | for example |', '| --- | --- | --- | --- | --- |'];
  for (const row of rows) lines.push(`| ${row.transport} | ${row.phase} | ${row.answer} | ${row.failure} | ${row.example} |`);
  return lines.join('\n');
}
