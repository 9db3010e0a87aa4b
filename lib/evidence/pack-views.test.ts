import { describe, expect, it } from 'vitest';
import type { PackEntry } from '@/lib/api/evidence';
import { piecesDigestOf } from '@/lib/templates/trace';
import { canonicalJson } from './hash';
import { messageProblem, messageTraceDigests, messageView } from './pack-views';

/**
 * The pack's message from its sent entry, in both forms an entry holds it: the HTML whole (every
 * entry before session 22, and a render LiquidJS made) and a trace of template pieces the pack
 * carries beside it.
 */

const entry = (message: Record<string, unknown>): PackEntry => ({
  seq: 1,
  prevHash: '0'.repeat(64),
  entryHash: '1'.repeat(64),
  noticeKey: 'k'.repeat(64),
  kind: 'notice.sent',
  recordedAt: '2026-12-08T00:00:00.000000Z',
  body: canonicalJson({ message: { subject: 'S', text: 'T\n', shown: { cancelLink: 'https://x.test/r/1' }, ...message } }),
  proof: { headToSeq: 1, index: 0, size: 1, path: [] },
});

const layout = ['<html><p>', '</p><a href="', '">Cancel</a></html>'];
const body = ['Hello ', ', your plan renews.'];
const pieces = { [piecesDigestOf(layout)]: layout, [piecesDigestOf(body)]: body };
const trace = {
  pieces: piecesDigestOf(layout),
  parts: [0, { pieces: piecesDigestOf(body), parts: [0, 'Ana', 1] }, 1, 'https://x.test/r/1', 2],
};
const html = '<html><p>Hello Ana, your plan renews.</p><a href="https://x.test/r/1">Cancel</a></html>';

describe("a pack's message", () => {
  it('is the HTML an entry holds whole, as before the traces', () => {
    const entries = [entry({ html })];
    expect(messageView(entries)).toEqual({ subject: 'S', text: 'T\n', html });
    expect(messageTraceDigests(entries)).toEqual([]);
    expect(messageProblem(entries, {})).toBeNull();
  });

  it('is joined from a trace and the pieces it names, nested ones included, to the same view', () => {
    const entries = [entry({ htmlTrace: trace })];
    expect(messageView(entries, pieces)).toEqual({ subject: 'S', text: 'T\n', html });
    expect(messageTraceDigests(entries).sort()).toEqual(Object.keys(pieces).sort());
    expect(messageProblem(entries, pieces)).toBeNull();
  });

  it('names what is wrong when it cannot be joined: pieces missing, not matching their digest, an index they do not have', () => {
    const entries = [entry({ htmlTrace: trace })];
    const [layoutDigest = '', bodyDigest = ''] = [piecesDigestOf(layout), piecesDigestOf(body)];
    expect(messageView(entries, {})).toMatchObject({ html: null });
    expect(messageProblem(entries, { [layoutDigest]: layout })).toBe(`template pieces ${bodyDigest.slice(0, 12)}… are not there`);
    expect(messageProblem(entries, { ...pieces, [bodyDigest]: ['Hello ', ', your plan ends.'] })).toBe(
      `template pieces ${bodyDigest.slice(0, 12)}… do not match their digest`,
    );
    const beyond = [entry({ htmlTrace: { ...trace, parts: [...trace.parts, 7] } })];
    expect(messageProblem(beyond, pieces)).toBe(`template pieces ${layoutDigest.slice(0, 12)}… have no piece 7`);
    expect(messageProblem([entry({ htmlTrace: 'not a trace' })], pieces)).toBe('a trace is not an object');
  });
});
