import type { Db } from '@/db/client';
import { chainEntries, listUnchained, lockChainHead, type ChainedLink } from '@/db/queries/evidence-record';
import { entryHashOf, GENESIS_HASH } from './hash';

/**
 * The one chainer: gives appended entries their place in the hash chain, in id order.
 *
 * Why a single head row locked `for update` rather than hashing at insert: a writer that had to
 * read the previous hash would serialise every send on one row (the claim's path, and two
 * concurrent inserts could both read the same head and fork the chain). Here a writer only
 * inserts; every worker runs this pass, and the head row's lock makes them take turns, so each
 * pass extends the head the previous one committed. The unique `seq` would refuse a fork even if
 * two passes ever ran on one head. An entry committed late (a lower id after a higher one was
 * chained) simply gets a later seq.
 */
export async function chainPendingEntries(db: Db, { batch = 5_000 }: { batch?: number } = {}): Promise<{ chained: number; headSeq: number }> {
  return db.transaction(async (tx) => {
    const head = await lockChainHead(tx, GENESIS_HASH);
    const pending = await listUnchained(tx, { limit: batch });
    let { seq, hash } = head;
    const links: ChainedLink[] = [];
    for (const entry of pending) {
      seq += 1;
      const entryHash = entryHashOf({
        seq,
        prevHash: hash,
        noticeKey: entry.noticeKey,
        kind: entry.kind,
        recordedAt: entry.recordedAt,
        bodyHash: entry.bodyHash,
      });
      links.push({ id: entry.id, seq, prevHash: hash, entryHash });
      hash = entryHash;
    }
    await chainEntries(tx, { links, head: { seq, hash } });
    return { chained: links.length, headSeq: seq };
  });
}

/** Until nothing is left unchained (a test's or the CLI's wait; the worker's pass takes one batch a tick). */
export async function chainAllPending(db: Db): Promise<number> {
  let total = 0;
  for (;;) {
    const { chained } = await chainPendingEntries(db);
    total += chained;
    if (chained === 0) return total;
  }
}
