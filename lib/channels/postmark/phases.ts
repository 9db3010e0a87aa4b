import type { PhaseRow } from '@/lib/transport/phases';
import { unansweredRows } from '@/lib/channels/http-phase';

/**
 * Postmark's answers (developer docs: API overview, "API error codes"), as the phase table reads
 * them. An `ErrorCode` row wins over its HTTP status. Checked row by row in `phases.test.ts` and
 * shown in ARCHITECTURE.md.
 */
export const postmarkRows: readonly PhaseRow[] = [
  ...unansweredRows('postmark'),
  { transport: 'postmark', phase: 'response', answer: 'HTTP 401', failure: 'config_broken', example: 'ErrorCode 10: bad or missing server token' },
  { transport: 'postmark', phase: 'response', answer: 'error 10', failure: 'config_broken', example: 'bad or missing API token' },
  { transport: 'postmark', phase: 'response', answer: 'error 400', failure: 'config_broken', example: 'sender signature not found (MAIL_FROM)' },
  { transport: 'postmark', phase: 'response', answer: 'error 401', failure: 'config_broken', example: 'sender signature not confirmed' },
  { transport: 'postmark', phase: 'response', answer: 'error 405', failure: 'config_broken', example: 'not allowed to send: out of credits' },
  { transport: 'postmark', phase: 'response', answer: 'error 412', failure: 'config_broken', example: 'account pending approval' },
  {
    transport: 'postmark',
    phase: 'response',
    answer: 'error 406',
    failure: 'recipient_refused',
    example: 'inactive recipient (bounced, complained, suppressed)',
  },
  { transport: 'postmark', phase: 'response', answer: 'error 300', failure: 'recipient_refused', example: 'invalid email request (the address)' },
  { transport: 'postmark', phase: 'response', answer: 'HTTP 429', failure: 'nothing_left', example: 'rate limit: refused before it was accepted' },
  { transport: 'postmark', phase: 'response', answer: 'HTTP 5xx', failure: 'outcome_unknown', example: '500 after the request was read' },
  { transport: 'postmark', phase: 'response', answer: 'other 4xx', failure: 'nothing_left', example: 'an error not listed: retried' },
];
