import type { Db } from '@/db/client';
import { recordTransportDown, recordTransportUp } from '@/db/queries/transport-status';
import type { SendOutcome } from '@/lib/mail/transport';
import type { Logger } from '@/lib/log';
import { transportUp } from '@/lib/metrics/registry';
import type { FailureClass, TransportName } from './phases';

/**
 * A breaker per transport, per worker. After `threshold` consecutive *nothing left* failures (a
 * relay that refuses connects, a greeting that never comes), or at once on *config broken* (535,
 * Twilio 20003: every send would be refused alike), the transport is **open**: the send path
 * claims nothing for it and defers its jobs to the next probe without counting an attempt
 * (`pausedUntil`), so no claim can be quarantined and no notice can run out of attempts while
 * it is down. A probe (SMTP: connect, EHLO, AUTH, QUIT; Twilio: the account resource) runs with
 * backoff, `probeBaseMs` doubling to `probeCapMs`; the first that succeeds closes the breaker.
 *
 * Why a threshold of consecutive failures rather than one: a single refused connect is also what
 * a relay restart looks like, and the release-and-retry path already handles one. Why probes
 * rather than letting one real send through: a probe sends no message, so it can never end
 * unknown and quarantine a claim, whatever the relay does.
 *
 * The state is the worker's own; `transport_status` (db/queries/transport-status.ts) records
 * the latest word of any worker for the console's banner, and `notice_ledger_transport_up` is
 * this worker's view.
 */

export type ProbeTransport = () => Promise<SendOutcome>;

export type BreakerSettings = { threshold: number; probeBaseMs: number; probeCapMs: number };

export type TransportBreakers = {
  /** While the transport's breaker is open: when to wake its jobs (the next probe); null when closed. */
  pausedUntil: (transport: TransportName) => Date | null;
  /** The outcome of a send through the transport (ignored while open: the probes decide then). */
  record: (transport: TransportName, outcome: SendOutcome) => void;
  isOpen: (transport: TransportName) => boolean;
  stop: () => void;
};

type Failure = { failure: Exclude<FailureClass, 'outcome_unknown' | 'recipient_refused'>; errorClass: string; code: number | null };

type Open = { since: Date; last: Failure; delayMs: number; nextProbeAt: Date; timer: NodeJS.Timeout | null };

type State = { consecutive: number; open: Open | null };

/** The transport-level failures a breaker counts; everything else (accepted, a recipient's refusal) proves the transport works. */
function breakerFailure(outcome: SendOutcome): Failure | 'works' | null {
  if (outcome.kind === 'accepted') return 'works';
  if (outcome.kind === 'unknown' || !outcome.phase) return null;
  if (outcome.failure === 'nothing_left' || outcome.failure === 'config_broken') {
    return { failure: outcome.failure, errorClass: outcome.errorClass, code: outcome.code };
  }
  return 'works';
}

export function createTransportBreakers({
  db,
  probes,
  settings,
  workerId,
  logger,
  now = () => new Date(),
}: {
  db: Db;
  probes: Partial<Record<TransportName, ProbeTransport>>;
  settings: BreakerSettings;
  workerId: string;
  logger: Logger;
  now?: () => Date;
}): TransportBreakers {
  const states = new Map<TransportName, State>();
  let stopped = false;
  for (const transport of Object.keys(probes) as TransportName[]) {
    states.set(transport, { consecutive: 0, open: null });
    transportUp.set({ transport }, 1);
  }

  const persist = (write: Promise<void>) =>
    write.catch((error: unknown) => logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'transport status not recorded'));

  const recordDown = (transport: TransportName, open: Open) =>
    persist(
      recordTransportDown(db, {
        transport,
        reason: open.last.failure,
        errorClass: open.last.errorClass,
        code: open.last.code,
        workerId,
        at: now(),
      }),
    );

  const scheduleProbe = (transport: TransportName, open: Open) => {
    if (stopped) return;
    open.nextProbeAt = new Date(now().getTime() + open.delayMs);
    open.timer = setTimeout(() => void runProbe(transport, open), open.delayMs);
    open.timer.unref();
  };

  const runProbe = async (transport: TransportName, open: Open) => {
    const probe = probes[transport];
    const state = states.get(transport);
    if (!probe || !state || state.open !== open || stopped) return;
    const outcome = await probe().catch((): SendOutcome => ({ kind: 'unknown', errorClass: 'probe_failed' }));
    if (stopped || state.open !== open) return;
    const verdict = breakerFailure(outcome);
    if (verdict === 'works') {
      state.open = null;
      state.consecutive = 0;
      transportUp.set({ transport }, 1);
      logger.info({ transport, downForMs: now().getTime() - open.since.getTime() }, 'transport breaker closed: probe succeeded');
      await persist(recordTransportUp(db, { transport, workerId, at: now() }));
      return;
    }
    if (verdict) open.last = verdict;
    open.delayMs = Math.min(settings.probeCapMs, open.delayMs * 2);
    logger.warn({ transport, errorClass: open.last.errorClass, nextProbeInMs: open.delayMs }, 'transport still down');
    await recordDown(transport, open);
    scheduleProbe(transport, open);
  };

  const openBreaker = (transport: TransportName, state: State, failure: Failure) => {
    const open: Open = { since: now(), last: failure, delayMs: settings.probeBaseMs, nextProbeAt: now(), timer: null };
    state.open = open;
    transportUp.set({ transport }, 0);
    logger.warn(
      { transport, reason: failure.failure, errorClass: failure.errorClass, consecutive: state.consecutive },
      'transport breaker opened: claiming nothing for it',
    );
    void recordDown(transport, open);
    scheduleProbe(transport, open);
  };

  return {
    pausedUntil: (transport) => {
      const open = states.get(transport)?.open;
      // A probe under way: wake a second later rather than in the past.
      return open ? new Date(Math.max(open.nextProbeAt.getTime(), now().getTime() + 1_000)) : null;
    },
    isOpen: (transport) => Boolean(states.get(transport)?.open),
    record: (transport, outcome) => {
      const state = states.get(transport);
      if (!state || state.open || stopped) return;
      const verdict = breakerFailure(outcome);
      if (verdict === null) return;
      if (verdict === 'works') {
        state.consecutive = 0;
        return;
      }
      state.consecutive += 1;
      if (verdict.failure === 'config_broken' || state.consecutive >= settings.threshold) openBreaker(transport, state, verdict);
    },
    stop: () => {
      stopped = true;
      for (const state of states.values()) if (state.open?.timer) clearTimeout(state.open.timer);
    },
  };
}
