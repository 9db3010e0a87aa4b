import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/**
 * The PostgreSQL topologies shipped in deploy/postgresql/ parse and keep what the guarantee
 * needs (README "Failover"): synchronous replication that never falls back to asynchronous.
 * No CloudNativePG schema package exists on the registry, so the Cluster's fields are checked
 * here against the operator's documented API (postgresql.cnpg.io/v1, 1.25+), not a schema.
 */

const read = (file: string): unknown => parse(readFileSync(path.resolve(import.meta.dirname, '..', 'deploy', 'postgresql', file), 'utf8'));

describe('deploy/postgresql', () => {
  it('CloudNativePG: three instances, quorum synchronous replication with required durability', () => {
    const cluster = read('cloudnative-pg-cluster.yaml') as {
      apiVersion: string;
      kind: string;
      spec: { instances: number; postgresql: { synchronous: { method: string; number: number; dataDurability: string } } };
    };
    expect(cluster).toMatchObject({ apiVersion: 'postgresql.cnpg.io/v1', kind: 'Cluster', spec: { instances: 3 } });
    const { synchronous } = cluster.spec.postgresql;
    expect(['any', 'first']).toContain(synchronous.method);
    expect(synchronous.number).toBeGreaterThanOrEqual(1);
    expect(synchronous.number).toBeLessThan(cluster.spec.instances);
    expect(synchronous.dataDurability).toBe('required');
  });

  it('Patroni: synchronous (quorum) mode, strict, synchronous_commit on', () => {
    const patroni = read('patroni.yml') as {
      bootstrap: {
        dcs: {
          synchronous_mode: string | boolean;
          synchronous_mode_strict: boolean;
          synchronous_node_count: number;
          postgresql: { parameters: Record<string, unknown> };
        };
      };
    };
    const { dcs } = patroni.bootstrap;
    expect([true, 'on', 'quorum']).toContain(dcs.synchronous_mode);
    expect(dcs.synchronous_mode_strict).toBe(true);
    expect(dcs.synchronous_node_count).toBeGreaterThanOrEqual(1);
    expect(dcs.postgresql.parameters.synchronous_commit).toBe('on');
  });
});
