import type { PhaseRow } from '@/lib/transport/phases';
import { unansweredRows } from '@/lib/channels/http-phase';

/**
 * Amazon SES v2's answers to SendEmail (API reference, SendEmail "Errors", and the common
 * errors of every AWS API), as the phase table reads them: an error name wins over its status.
 */
export const sesRows: readonly PhaseRow[] = [
  ...unansweredRows('ses'),
  { transport: 'ses', phase: 'response', answer: 'HTTP 403', failure: 'config_broken', example: 'InvalidClientTokenId, SignatureDoesNotMatch, AccessDenied' },
  { transport: 'ses', phase: 'response', answer: 'error AccountSuspendedException', failure: 'config_broken', example: 'the account may not send' },
  { transport: 'ses', phase: 'response', answer: 'error SendingPausedException', failure: 'config_broken', example: 'sending paused for the account or set' },
  {
    transport: 'ses',
    phase: 'response',
    answer: 'error MailFromDomainNotVerifiedException',
    failure: 'config_broken',
    example: 'MAIL FROM domain not verified',
  },
  { transport: 'ses', phase: 'response', answer: 'error NotFoundException', failure: 'config_broken', example: 'SES_CONFIGURATION_SET does not exist' },
  { transport: 'ses', phase: 'response', answer: 'error MessageRejected', failure: 'recipient_refused', example: 'the message or address refused' },
  { transport: 'ses', phase: 'response', answer: 'error LimitExceededException', failure: 'nothing_left', example: 'sending quota reached' },
  { transport: 'ses', phase: 'response', answer: 'HTTP 429', failure: 'nothing_left', example: 'TooManyRequestsException' },
  { transport: 'ses', phase: 'response', answer: 'HTTP 5xx', failure: 'outcome_unknown', example: 'InternalServiceErrorException after the request was read' },
  { transport: 'ses', phase: 'response', answer: 'other 4xx', failure: 'nothing_left', example: 'an error not listed: retried' },
];
