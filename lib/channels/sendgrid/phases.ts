import type { PhaseRow } from '@/lib/transport/phases';
import { unansweredRows } from '@/lib/channels/http-phase';

/**
 * SendGrid's answers to `POST /v3/mail/send` (v3 API, Mail Send "Responses"): 202 accepted, or a
 * refusal of the whole request with `{errors: [{message, field, help}]}` and no per-item result.
 */
export const sendgridRows: readonly PhaseRow[] = [
  ...unansweredRows('sendgrid'),
  { transport: 'sendgrid', phase: 'response', answer: 'HTTP 401', failure: 'config_broken', example: 'API key invalid, expired or revoked' },
  { transport: 'sendgrid', phase: 'response', answer: 'HTTP 403', failure: 'config_broken', example: 'key lacks mail.send, sender not verified (MAIL_FROM)' },
  { transport: 'sendgrid', phase: 'response', answer: 'HTTP 400', failure: 'recipient_refused', example: 'the message refused whole (an invalid address)' },
  { transport: 'sendgrid', phase: 'response', answer: 'HTTP 413', failure: 'recipient_refused', example: 'the message is too large' },
  { transport: 'sendgrid', phase: 'response', answer: 'HTTP 429', failure: 'nothing_left', example: 'rate limit, X-RateLimit-Reset' },
  { transport: 'sendgrid', phase: 'response', answer: 'HTTP 5xx', failure: 'outcome_unknown', example: '500 after the request was read' },
  { transport: 'sendgrid', phase: 'response', answer: 'other 4xx', failure: 'nothing_left', example: 'an error not listed: retried' },
];
