import { phaseRowFor, type FailureClass, type Phase, type PhaseRow, type TransportName } from '@/lib/transport/phases';
import type { ChannelOutcome } from './types';

/**
 * What the HTTP email providers share: where a request that got no answer stopped, and the
 * outcome a row of the phase table makes of an answer. Every SDK reports a missing answer its own
 * way (undici's `fetch failed` with a cause, Node's socket errors, axios codes); each is read
 * down its `cause` chain for the system call that failed.
 */

type SystemError = { code?: unknown; syscall?: unknown; name?: unknown; message?: unknown; cause?: unknown };

function chainOf(error: unknown): SystemError[] {
  const chain: SystemError[] = [];
  let at: unknown = error;
  while (typeof at === 'object' && at !== null && chain.length < 5) {
    chain.push(at as SystemError);
    at = (at as SystemError).cause;
  }
  return chain;
}

/**
 * dns / connect / tls when the connection never stood (nothing can have left); `response` for
 * everything else — a reset, a timeout, an abort — since the request may have been read.
 * A connect timeout of the SDK itself (SES: "without establishing a connection") is `connect`.
 */
export function unansweredPhase(error: unknown): Phase {
  for (const link of chainOf(error)) {
    const code = typeof link.code === 'string' ? link.code : '';
    const syscall = typeof link.syscall === 'string' ? link.syscall : '';
    const message = typeof link.message === 'string' ? link.message : '';
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || syscall === 'getaddrinfo') return 'dns';
    if (code === 'ECONNREFUSED' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || syscall === 'connect' || code === 'UND_ERR_CONNECT_TIMEOUT')
      return 'connect';
    if (/without establishing a connection/i.test(message)) return 'connect';
    if (/^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO_)/.test(code) || code === 'EPROTO') return 'tls';
  }
  return 'response';
}

const unansweredClass: Partial<Record<Phase, string>> = { dns: 'dns_failed', connect: 'connect_failed', tls: 'tls_failed' };

/** The error class of a request with no answer: `timeout`, `connection_lost`, or the connect failure. */
export function unansweredErrorClass(error: unknown, phase: Phase): string {
  const named = unansweredClass[phase];
  if (named) return named;
  for (const link of chainOf(error)) {
    const code = typeof link.code === 'string' ? link.code : '';
    const name = typeof link.name === 'string' ? link.name : '';
    const message = typeof link.message === 'string' ? link.message : '';
    if (name === 'TimeoutError' || code === 'ECONNABORTED' || code === 'ETIMEDOUT' || /time(d)? ?out/i.test(message)) return 'timeout';
    if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET' || /socket hang up|other side closed/i.test(message)) return 'connection_lost';
  }
  return 'no_answer';
}

/** The answers a provider's row can name for an HTTP answer, most specific first. */
export function httpAnswers(status: number, code: string | number | null): string[] {
  return [...(code !== null && code !== '' ? [`error ${code}`] : []), `HTTP ${status}`, `HTTP ${Math.floor(status / 100)}xx`, 'other 4xx'];
}

/** What a row of `rows` makes of a failure: the send path's outcome, classified. */
export function outcomeOfRow({
  rows,
  transport,
  phase,
  answers,
  status,
  errorClass,
  recipientRefusal = {},
}: {
  rows: readonly PhaseRow[];
  transport: TransportName;
  phase: Phase;
  answers: readonly string[];
  status: number | null;
  errorClass: string;
  recipientRefusal?: { mailboxUnknown?: boolean; detail?: string };
}): Exclude<ChannelOutcome, { kind: 'accepted' }> {
  const failure: FailureClass = phaseRowFor(rows, transport, phase, answers).failure;
  if (failure === 'outcome_unknown') return { kind: 'unknown', errorClass, phase };
  return {
    kind: 'rejected',
    permanent: failure === 'recipient_refused',
    code: status,
    errorClass,
    failure,
    phase,
    ...(failure === 'recipient_refused' ? recipientRefusal : {}),
  };
}

/** A request that got no answer, classified by where it stopped. */
export function unansweredOutcome(rows: readonly PhaseRow[], transport: TransportName, error: unknown): Exclude<ChannelOutcome, { kind: 'accepted' }> {
  const phase = unansweredPhase(error);
  return outcomeOfRow({ rows, transport, phase, answers: ['no answer'], status: null, errorClass: unansweredErrorClass(error, phase) });
}

/** The rows every HTTP provider has for a request that got no answer. */
export function unansweredRows(transport: TransportName): PhaseRow[] {
  return [
    { transport, phase: 'dns', answer: 'no answer', failure: 'nothing_left', example: 'ENOTFOUND' },
    { transport, phase: 'connect', answer: 'no answer', failure: 'nothing_left', example: 'ECONNREFUSED, connect timeout' },
    { transport, phase: 'tls', answer: 'no answer', failure: 'nothing_left', example: 'handshake failed' },
    { transport, phase: 'response', answer: 'no answer', failure: 'outcome_unknown', example: 'timeout or reset after the request left' },
  ];
}

/** A probe creates nothing: no answer to it, or a 5xx, is nothing left, never an unknown message. */
export function probeOutcome(outcome: ChannelOutcome): ChannelOutcome {
  if (outcome.kind !== 'unknown') return outcome;
  return { kind: 'rejected', permanent: false, code: null, errorClass: outcome.errorClass, failure: 'nothing_left', phase: outcome.phase ?? 'response' };
}

/** `Retry-After` as seconds (RFC 9110 also allows an HTTP date), in ms; null when absent or unreadable. */
export function retryAfterMsOf(value: string | null): number | null {
  if (!value) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}
