import { Counter, Gauge } from 'prom-client';
import { registry } from './registry';

/** The evidence record's figures (lib/evidence/), in the process's one registry. */

export const evidenceWriteFailures = new Counter({
  name: 'notice_ledger_evidence_write_failures_total',
  help: 'Evidence entries a writer could not append (the notice itself was committed).',
  labelNames: ['kind'] as const,
  registers: [registry],
});

export const evidenceChainBroken = new Gauge({
  name: 'notice_ledger_evidence_chain_broken',
  help: 'Problems the last evidence verification pass found in the hash chain and its signed heads (0 = the chain holds).',
  registers: [registry],
});

export const evidenceChainVerifiedAt = new Gauge({
  name: 'notice_ledger_evidence_chain_verified_timestamp_seconds',
  help: 'When the last evidence verification pass finished (Unix seconds).',
  registers: [registry],
});

export const evidenceEntriesVerified = new Gauge({
  name: 'notice_ledger_evidence_entries_verified',
  help: 'Chain entries the last verification pass checked.',
  registers: [registry],
});
