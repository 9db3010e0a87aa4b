import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createLogger } from '@/lib/log';
import { createDeliveryLifecycle, decideSettlement, type DeliveryTransport, type StartTimer } from './delivery';
import type { HandlerResult, WakeupHandler } from './types';

/**
 * The lifecycle without a broker: what it does, in which order, against a transport that
 * records its calls and a deadline fired by hand. The contract suite (contract.ts) proves the
 * same against pg-boss and RabbitMQ.
 */

type Call = { method: 'ack' | 'discard' | 'requeue' | 'releaseExpired' | 'publish'; id: string };

function recordingTransport(params: { ackGate?: Promise<void> } = {}) {
  const calls: Call[] = [];
  const leases: { expired: () => boolean }[] = [];
  const transport: DeliveryTransport<string> = {
    ack: async (id, lease) => {
      leases.push(lease);
      await params.ackGate;
      calls.push({ method: 'ack', id });
    },
    discard: async (id) => void calls.push({ method: 'discard', id }),
    requeue: async (id) => void calls.push({ method: 'requeue', id }),
    releaseExpired: async (id) => void calls.push({ method: 'releaseExpired', id }),
    publish: async (wakeup) => {
      calls.push({ method: 'publish', id: wakeup.jobId });
      return 'published';
    },
  };
  return { transport, calls, leases };
}

function handTimers() {
  const pending = new Map<number, () => void>();
  let next = 0;
  const startTimer: StartTimer = (_ms, fire) => {
    next += 1;
    const id = next;
    pending.set(id, fire);
    return () => pending.delete(id);
  };
  const fireAll = () => {
    for (const [id, fire] of [...pending]) {
      pending.delete(id);
      fire();
    }
  };
  return { startTimer, fireAll, pending: () => pending.size };
}

function deferred<T>() {
  let resolve: (value: T) => void = () => undefined;
  let reject: (error: unknown) => void = () => undefined;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const logger = createLogger('delivery-test', 'silent');
const incoming = (jobId: string) => ({ message: jobId, payload: { jobId }, messageId: `m-${jobId}`, deliveryCount: 1, visibilityMs: 60_000 });
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('decideSettlement', () => {
  it('acks a handler that returned or threw, requeues one that gave up because the worker stops, leaves an expired one alone', () => {
    const cases = [
      { threw: false, expired: false, stopping: false, want: 'ack' },
      { threw: true, expired: false, stopping: false, want: 'ack' },
      { threw: false, expired: false, stopping: true, want: 'ack' },
      { threw: true, expired: false, stopping: true, want: 'requeue' },
      { threw: false, expired: true, stopping: false, want: 'none' },
      { threw: true, expired: true, stopping: false, want: 'none' },
      { threw: true, expired: true, stopping: true, want: 'none' },
    ] as const;
    for (const { want, ...input } of cases) expect(decideSettlement(input), JSON.stringify(input)).toBe(want);
  });
});

describe('delivery lifecycle', () => {
  it('acks only after the handler returned, after publishing the wake-up it asked for', async () => {
    const { transport, calls } = recordingTransport();
    const timers = handTimers();
    const gate = deferred<HandlerResult>();
    const lifecycle = createDeliveryLifecycle({ transport, handler: () => gate.promise, queueName: 'q', logger, startTimer: timers.startTimer });
    const jobId = randomUUID();
    const done = lifecycle.deliver(incoming(jobId));
    await tick();
    expect(calls).toEqual([]);
    expect(lifecycle.inFlight).toBe(1);
    gate.resolve({ ack: true, wakeAt: new Date(Date.now() + 60_000) });
    await done;
    expect(calls).toEqual([
      { method: 'publish', id: jobId },
      { method: 'ack', id: jobId },
    ]);
    expect(lifecycle.inFlight).toBe(0);
    expect(timers.pending()).toBe(0);
  });

  it('at the deadline: aborts the handler, releases the delivery, and never acks it afterwards', async () => {
    const { transport, calls } = recordingTransport();
    const timers = handTimers();
    let signal: AbortSignal | null = null;
    const handler: WakeupHandler = (delivery) => {
      signal = delivery.signal;
      return new Promise((resolve) => delivery.signal.addEventListener('abort', () => resolve({ ack: true }), { once: true }));
    };
    const lifecycle = createDeliveryLifecycle({ transport, handler, queueName: 'q', logger, startTimer: timers.startTimer });
    const jobId = randomUUID();
    const done = lifecycle.deliver(incoming(jobId));
    await tick();
    timers.fireAll();
    await done;
    expect((signal as AbortSignal | null)?.aborted).toBe(true);
    expect(calls).toEqual([{ method: 'releaseExpired', id: jobId }]);
  });

  it('a deadline passing while a batched ack waits is visible to that ack', async () => {
    const gate = deferred<void>();
    const { transport, leases } = recordingTransport({ ackGate: gate.promise });
    const timers = handTimers();
    const lifecycle = createDeliveryLifecycle({ transport, handler: async () => ({ ack: true }), queueName: 'q', logger, startTimer: timers.startTimer });
    const done = lifecycle.deliver(incoming(randomUUID()));
    await tick();
    expect(leases.map((lease) => lease.expired())).toEqual([false]);
    timers.fireAll();
    expect(leases.map((lease) => lease.expired())).toEqual([true]);
    gate.resolve();
    await done;
  });

  it('a handler that throws is acked (the sweeper re-wakes the pending job); after stop, one that gives up is requeued', async () => {
    const { transport, calls } = recordingTransport();
    const timers = handTimers();
    const handler: WakeupHandler = (delivery) =>
      new Promise((_resolve, reject) => {
        if (delivery.wakeup.jobId === failing) reject(new Error('database unavailable'));
        delivery.signal.addEventListener('abort', () => reject(new Error('aborted before the claim')), { once: true });
      });
    const failing = randomUUID();
    const stopped = randomUUID();
    const lifecycle = createDeliveryLifecycle({ transport, handler, queueName: 'q', logger, startTimer: timers.startTimer });
    await lifecycle.deliver(incoming(failing));
    const pending = lifecycle.deliver(incoming(stopped));
    await tick();
    await lifecycle.stop();
    await pending;
    expect(calls).toEqual([
      { method: 'ack', id: failing },
      { method: 'requeue', id: stopped },
    ]);
  });

  it('discards a payload that is not a wake-up without calling the handler', async () => {
    const { transport, calls } = recordingTransport();
    let called = false;
    const lifecycle = createDeliveryLifecycle({
      transport,
      handler: async () => {
        called = true;
        return { ack: true };
      },
      queueName: 'q',
      logger,
    });
    await lifecycle.deliver({ message: 'bad', payload: { jobId: 'not-a-uuid' }, messageId: 'm-bad', visibilityMs: 60_000 });
    expect(called).toBe(false);
    expect(calls).toEqual([{ method: 'discard', id: 'bad' }]);
  });
});
