import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { listTransportsDown } from '@/db/queries/transport-status';
import { createLogger } from '@/lib/log';
import type { SendOutcome } from '@/lib/mail/transport';
import { transportUp } from '@/lib/metrics/registry';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { createTransportBreakers } from './breaker';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t?.drop();
});

const refused: SendOutcome = { kind: 'rejected', permanent: false, code: null, errorClass: 'connect_failed', failure: 'nothing_left', phase: 'connect' };
const loginRefused: SendOutcome = { kind: 'rejected', permanent: false, code: 535, errorClass: 'smtp_535', failure: 'config_broken', phase: 'auth' };
const accepted: SendOutcome = { kind: 'accepted', providerMessageId: 'q1' };
const up = async () => (await transportUp.get()).values.find((value) => value.labels.transport === 'smtp')?.value;

function breakersWith(probe: () => Promise<SendOutcome>) {
  return createTransportBreakers({
    db: t.db,
    probes: { smtp: probe },
    settings: { threshold: 3, probeBaseMs: 50, probeCapMs: 200 },
    workerId: 'breaker-test',
    logger: createLogger('test', 'silent'),
  });
}

describe('the transport breaker', () => {
  it('opens after the threshold of consecutive nothing-left failures, not before; a success in between resets the count', async () => {
    const breakers = breakersWith(async () => refused);
    try {
      breakers.record('smtp', refused);
      breakers.record('smtp', refused);
      breakers.record('smtp', accepted);
      breakers.record('smtp', refused);
      breakers.record('smtp', refused);
      expect(breakers.pausedUntil('smtp')).toBeNull();
      // An outcome that says nothing about the transport (ours: a template that does not render) does not count.
      breakers.record('smtp', { kind: 'rejected', permanent: true, code: null, errorClass: 'render_failed' });
      expect(breakers.isOpen('smtp')).toBe(false);
      breakers.record('smtp', refused);
      expect(breakers.isOpen('smtp')).toBe(true);
      expect(await up()).toBe(0);
      expect(breakers.pausedUntil('smtp')?.getTime()).toBeGreaterThan(Date.now());
      await vi.waitFor(async () =>
        expect(await listTransportsDown(t.db)).toEqual([expect.objectContaining({ transport: 'smtp', reason: 'nothing_left', errorClass: 'connect_failed' })]),
      );
    } finally {
      breakers.stop();
    }
  });

  it('opens at once on config broken, probes with backoff, and closes by itself on the first successful probe', async () => {
    let probes = 0;
    let relayBack = false;
    const breakers = breakersWith(async () => {
      probes += 1;
      return relayBack ? accepted : loginRefused;
    });
    try {
      breakers.record('smtp', loginRefused);
      expect(breakers.isOpen('smtp')).toBe(true);
      // While open a send's outcome changes nothing: only probes decide.
      breakers.record('smtp', accepted);
      expect(breakers.isOpen('smtp')).toBe(true);
      await vi.waitFor(() => expect(probes).toBeGreaterThanOrEqual(3), { timeout: 5_000 });
      expect(breakers.isOpen('smtp')).toBe(true);
      relayBack = true;
      await vi.waitFor(() => expect(breakers.isOpen('smtp')).toBe(false), { timeout: 5_000 });
      expect(breakers.pausedUntil('smtp')).toBeNull();
      expect(await up()).toBe(1);
      await vi.waitFor(async () => expect(await listTransportsDown(t.db)).toEqual([]));
    } finally {
      breakers.stop();
    }
  });
});
