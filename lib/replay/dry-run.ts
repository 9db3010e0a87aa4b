import type { DbOrTx } from '@/db/client';
import { countKeysByLedgerStateInRange, isTransaction } from '@/db/queries/replay-dry-run';
import type { DryRunCounts } from '@/db/schema/replays';
import { mergeDryRunCounts } from './verdict';

/**
 * Distinct keys per lookup statement, one sorted key range each. Measured against 10 M ledger
 * rows (bench/replay-dry-run.ts), 31–62 k keys per range ran at the same speed; 125 k tipped
 * the planner into a parallel plan ten times slower (now switched off in the statement).
 */
export const DRY_RUN_CHUNK = 50_000;

/** Statements in flight on a pool: one per core of the database while Node waits. */
const IN_FLIGHT = 2;

const hexValue = new Int8Array(128).fill(-1);
for (let digit = 0; digit < 16; digit += 1) hexValue[digit.toString(16).charCodeAt(0)] = digit;

/** The first 16 bits of a key that starts with four lower-case hex digits, else -1. */
function leadingBits(key: string): number {
  if (key.length < 4) return -1;
  let bits = 0;
  for (let index = 0; index < 4; index += 1) {
    const digit = hexValue[key.charCodeAt(index)] ?? -1;
    if (digit < 0) return -1;
    bits = (bits << 4) | digit;
  }
  return bits;
}

/**
 * The keys, de-duplicated and sorted, cut into chunks of at most `chunkSize`: each chunk is one
 * narrow, ascending range of the primary key. Notice keys are hex HMAC output, spread evenly,
 * so they are sorted by distributing them on their leading 16 bits (about 16 keys per bucket
 * for 1 M keys) and sorting each small bucket: ~0.15 s for 1 M keys where one Array.sort took
 * 0.5–0.7 s of the event loop. Keys that do not start with hex digits are sorted the plain way
 * and counted the same.
 */
export function sortedDistinctChunks(keys: readonly string[], chunkSize = DRY_RUN_CHUNK): string[][] {
  const bucketBits = Math.min(16, Math.max(0, Math.ceil(Math.log2(keys.length / 16))));
  const buckets: string[][] = Array.from({ length: 2 ** bucketBits }, () => []);
  const other: string[] = [];
  for (const key of keys) {
    const bits = leadingBits(key);
    if (bits < 0) other.push(key);
    else buckets[bits >>> (16 - bucketBits)]?.push(key);
  }
  buckets.push(other);
  const chunks: string[][] = [];
  let chunk: string[] = [];
  for (const bucket of buckets) {
    if (bucket.length === 0) continue;
    bucket.sort();
    for (let index = 0; index < bucket.length; index += 1) {
      const key = bucket[index] ?? '';
      if (index > 0 && key === bucket[index - 1]) continue;
      if (chunk.length === chunkSize) {
        chunks.push(chunk);
        chunk = [];
      }
      chunk.push(key);
    }
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/** Distinct keys by ledger state: one set-based statement per chunk, IN_FLIGHT at a time. */
export async function countKeysAgainstLedger(
  db: DbOrTx,
  { keys, chunkSize = DRY_RUN_CHUNK }: { keys: readonly string[]; chunkSize?: number },
): Promise<DryRunCounts> {
  const chunks = sortedDistinctChunks(keys, chunkSize);
  const parts: DryRunCounts[] = [];
  let next = 0;
  const lookUp = async () => {
    for (let chunk = chunks[next++]; chunk; chunk = chunks[next++]) parts.push(await countKeysByLedgerStateInRange(db, { keys: chunk }));
  };
  // A transaction has one connection: its statements go one after the other.
  await Promise.all(Array.from({ length: isTransaction(db) ? 1 : IN_FLIGHT }, lookUp));
  return mergeDryRunCounts(parts);
}
