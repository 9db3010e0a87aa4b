import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@/lib/config';
import { createLogger } from '@/lib/log';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { startMetricsServer } from './metrics-server';
import { queueNotUnderTest } from '@/testing/metrics-endpoints';

/**
 * The worker's /metrics has no authentication, so where it listens is the whole of its access
 * control: loopback unless WORKER_METRICS_HOST says otherwise.
 */

let t: TestDatabase;
const logger = createLogger('metrics-server-test', 'silent');

beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

function startAt(host: string) {
  return startMetricsServer({ queue: queueNotUnderTest, host, port: 0, db: t.db, quarantineAfterMs: 15 * 60_000, logger });
}

async function reachable(url: string): Promise<boolean> {
  try {
    return (await fetch(url)).ok;
  } catch {
    return false;
  }
}

describe('worker metrics server bind address', () => {
  it('listens on the configured default, loopback, and nowhere else', async () => {
    const host = loadConfig({ NOTICE_KEY_SECRET: 'x'.repeat(32) }).WORKER_METRICS_HOST;
    const server = await startAt(host);
    try {
      expect(server.host).toBe('127.0.0.1');
      expect(await reachable(`http://127.0.0.1:${server.port}/metrics`)).toBe(true);
      // Another address of this machine (all of 127/8 is loopback on Linux): a server bound
      // to 0.0.0.0 answers there, one bound to 127.0.0.1 does not.
      expect(await reachable(`http://127.0.0.2:${server.port}/metrics`)).toBe(false);
    } finally {
      await server.close();
    }
  });

  it('listens where configured: an IPv6 address, or every address', async () => {
    for (const [host, expected, alsoAt] of [
      ['::1', '::1', null],
      ['0.0.0.0', '0.0.0.0', '127.0.0.2'],
    ] as const) {
      const server = await startAt(loadConfig({ NOTICE_KEY_SECRET: 'x'.repeat(32), WORKER_METRICS_HOST: host }).WORKER_METRICS_HOST);
      try {
        expect(server.host, host).toBe(expected);
        const at = expected === '::1' ? '[::1]' : '127.0.0.1';
        expect(await reachable(`http://${at}:${server.port}/metrics`), host).toBe(true);
        if (alsoAt) expect(await reachable(`http://${alsoAt}:${server.port}/metrics`), host).toBe(true);
        else expect(await reachable(`http://127.0.0.1:${server.port}/metrics`), host).toBe(false);
      } finally {
        await server.close();
      }
    }
  });

  it('an address this machine does not have is a start-up error naming the variable', async () => {
    // 192.0.2.0/24 is TEST-NET-1: valid syntax, never assigned to a host.
    await expect(startAt('192.0.2.1')).rejects.toThrow(/WORKER_METRICS_HOST.*EADDRNOTAVAIL/);
  });
});
