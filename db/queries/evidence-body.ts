import { createHash } from 'node:crypto';
import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';

/**
 * How an evidence entry's body (RFC 8785 canonical JSON) is stored: as text, or, from
 * COMPRESS_FROM_BYTES of UTF-8 on, Brotli-compressed by its writer with the SHA-256 of those bytes
 * beside it (db/schema/evidence-record.ts). A send's entry holds the rendered message, ~14 KB:
 * as text the server compressed it itself with pglz (~0.27 ms of its CPU per entry, and ~8.7 KB of
 * WAL per notice); Brotli at quality 1 takes ~35 µs in the worker for ~5× smaller bytes, which the
 * server stores as they are. Its hash, computed here from the same bytes, spares the chainer from
 * reading the body back to hash it; the verification pass and every pack verification still
 * recompute it from the body.
 */

/** Below this many UTF-8 bytes a body stays text: the server keeps it inline, uncompressed, anyway (its TOAST threshold is ~2 KB). */
export const COMPRESS_FROM_BYTES = 2_000;

export type StoredBody = { text: string; brotli: null; hash: null } | { text: null; brotli: Buffer; hash: string };

// The UTF-8 bytes of the body being stored, reused from one call to the next (each call is
// synchronous): Buffer.from allocates and measures first, 39 µs for a 24 KB body holding a `€`,
// against 13 µs to write it here (a micro-benchmark, Node 20).
let scratch = Buffer.allocUnsafe(64 * 1024);

export function storedBody(body: string): StoredBody {
  // A UTF-8 string is at most 3 bytes per UTF-16 unit and at least 1: most bodies are decided without encoding them.
  if (body.length * 3 < COMPRESS_FROM_BYTES) return { text: body, brotli: null, hash: null };
  if (scratch.length < body.length * 3) scratch = Buffer.allocUnsafe(body.length * 3);
  const bytes = scratch.subarray(0, scratch.write(body, 'utf8'));
  if (bytes.length < COMPRESS_FROM_BYTES) return { text: body, brotli: null, hash: null };
  return {
    text: null,
    brotli: brotliCompressSync(bytes, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 1,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
        // A window just large enough for the body: the encoder sets up tables for the window it is
        // given (the default 4 MB one cost ~3× the time on a 3 KB body), and a body never refers
        // back further than its own length. Decoding needs no setting: the window is in the stream.
        [constants.BROTLI_PARAM_LGWIN]: Math.min(24, Math.max(10, Math.ceil(Math.log2(bytes.length + 1)))),
      },
    }),
    // SHA-256 in lower-case hex of the UTF-8 bytes: lib/evidence/hash.ts sha256Hex of the string.
    hash: createHash('sha256').update(bytes).digest('hex'),
  };
}

/**
 * What stands for a body whose compressed bytes no longer decompress (edited in the database): a
 * body like any other, which matches no hash, so the verification pass and a verified pack report
 * the entry's content as not matching its hash, as they do for an edited text body.
 */
export const DAMAGED_BODY = '{"damaged":"this entry\'s stored body does not decompress: it was changed after it was written"}';

/** The body's text from either stored form. */
export function bodyText(text: string | null, brotli: Buffer | null): string {
  if (text !== null) return text;
  if (brotli === null) return DAMAGED_BODY;
  try {
    return brotliDecompressSync(brotli).toString('utf8');
  } catch {
    return DAMAGED_BODY;
  }
}
