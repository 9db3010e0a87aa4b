import { createHash } from 'node:crypto';

/**
 * The hashing every evidence check shares, the worker's and `ledger evidence verify`'s alike:
 * RFC 8785 canonical JSON, SHA-256 in lower-case hex, and RFC 6962 Merkle hashing (0x00 before a
 * leaf, 0x01 before a node) for a signed head's inclusion paths.
 */

export const GENESIS_HASH = '0'.repeat(64);

// String.prototype.isWellFormed (ES2024, V8 native) where the runtime has it; else a `u` regex, in
// which a paired surrogate is one code point, so \p{Cs} matches only a lone one.
const cs = /\p{Cs}/u;
const hasLoneSurrogate: (text: string) => boolean =
  typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === 'function'
    ? (text) => !(text as string & { isWellFormed: () => boolean }).isWellFormed()
    : (text) => cs.test(text);

/**
 * RFC 8785 (JCS): object keys sorted by UTF-16 code units, no whitespace, numbers and strings as
 * ECMAScript's JSON.stringify writes them; NaN, Infinity and lone surrogates refused. The same
 * output as the `canonicalize` package (hash.test.ts checks it on arbitrary values), without its
 * per-character surrogate scan in JavaScript: the send path canonicalises the rendered message
 * (lib/evidence/record.ts), whose HTML is most of the body.
 */
function canonical(value: unknown): string | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      if (hasLoneSurrogate(value)) throw new Error('Lone surrogate is not allowed');
      return JSON.stringify(value);
    case 'number':
      if (Number.isNaN(value)) throw new Error('NaN is not allowed');
      if (!Number.isFinite(value)) throw new Error('Infinity is not allowed');
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      const toJson = (value as { toJSON?: unknown }).toJSON;
      if (typeof toJson === 'function') return canonical((toJson as () => unknown).call(value));
      if (Array.isArray(value))
        return `[${value.map((item: unknown) => (item === undefined || typeof item === 'symbol' ? 'null' : canonical(item))).join(',')}]`;
      const record = value as Record<string, unknown>;
      const parts: string[] = [];
      for (const key of Object.keys(record).sort()) {
        const item = record[key];
        if (item === undefined || typeof item === 'symbol') continue;
        parts.push(`${canonical(key) ?? ''}:${canonical(item) ?? ''}`);
      }
      return `{${parts.join(',')}}`;
    }
    case 'bigint':
      throw new TypeError('a BigInt is not JSON');
    default:
      return undefined;
  }
}

/** The replacer's way to say "not this way": canonicalJson takes the walk above instead. */
class NotFast extends Error {}
const notFast = new NotFast();
// A key JavaScript orders before the others, numerically (an array index), not by code units.
const indexLike = /^(?:0|[1-9][0-9]*)$/;
// A lone surrogate, which JSON.stringify escapes and RFC 8785 refuses; or a `\\u…` an escaped backslash is followed by (then the walk decides).
const escapedSurrogate = /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;

/** JSON.stringify's replacer: each object's keys in code-unit order; anything the walk must decide (an index-like key, a non-finite number) leaves this way. */
function sortedKeys(_key: string, value: unknown): unknown {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw notFast;
    return value;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  let ordered = true;
  for (let i = 0; i < keys.length; i += 1) {
    const key = keys[i] as string;
    if (indexLike.test(key)) throw notFast;
    if (i > 0 && (keys[i - 1] as string) > key) ordered = false;
  }
  if (ordered) return value;
  const copy = Object.create(null) as Record<string, unknown>;
  for (const key of keys.sort()) copy[key] = record[key];
  return copy;
}

/**
 * RFC 8785 canonical JSON. Where strings, finite numbers and keys that are not array indices are
 * all there is (every body the product writes), it is JSON.stringify over objects whose keys are
 * in code-unit order: the same bytes (RFC 8785 §3.2 is ECMAScript's serialisation), written by
 * V8 rather than concatenated in JavaScript — a send's entry took ~50 µs the other way (issue 28).
 * Anything else (a lone surrogate, NaN, an index-like key, an error) takes the walk above, which
 * decides it as the `canonicalize` package does (hash.test.ts checks both ways against it).
 */
export function canonicalJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value, sortedKeys);
  } catch {
    text = undefined;
  }
  if (text === undefined || escapedSurrogate.test(text)) text = canonical(value);
  if (text === undefined) throw new TypeError('evidence must be JSON');
  return text;
}

export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** What an entry's hash covers: its place in the chain and its body's hash (so a path can carry another notice's entry without its body). */
export type EntryHeader = { seq: number; prevHash: string; noticeKey: string; kind: string; recordedAt: string; bodyHash: string };

export function entryHashOf(header: EntryHeader): string {
  return sha256Hex(canonicalJson({ v: 1, ...header }));
}

const leafHash = (hex: string) =>
  createHash('sha256')
    .update(Buffer.from([0]))
    .update(Buffer.from(hex, 'hex'))
    .digest('hex');
const nodeHash = (left: string, right: string) =>
  createHash('sha256')
    .update(Buffer.from([1]))
    .update(Buffer.from(left, 'hex'))
    .update(Buffer.from(right, 'hex'))
    .digest('hex');

/** RFC 6962 §2.1 Merkle tree hash of the leaves (entry hashes, in seq order). */
export function merkleRoot(leaves: readonly string[]): string {
  if (leaves.length === 0) return sha256Hex('');
  if (leaves.length === 1) return leafHash(leaves[0] ?? '');
  const k = largestPowerOfTwoBelow(leaves.length);
  return nodeHash(merkleRoot(leaves.slice(0, k)), merkleRoot(leaves.slice(k)));
}

/** RFC 6962 §2.1.1 audit path of leaf `index`. */
export function merklePath(leaves: readonly string[], index: number): string[] {
  if (leaves.length <= 1) return [];
  const k = largestPowerOfTwoBelow(leaves.length);
  if (index < k) return [...merklePath(leaves.slice(0, k), index), merkleRoot(leaves.slice(k))];
  return [...merklePath(leaves.slice(k), index - k), merkleRoot(leaves.slice(0, k))];
}

/** The root an audit path leads to from a leaf (RFC 9162 §2.1.3.2), or null when the path cannot belong to a tree of that size. */
export function rootFromPath({ leaf, index, size, path }: { leaf: string; index: number; size: number; path: readonly string[] }): string | null {
  if (index < 0 || index >= size) return null;
  let fn = index;
  let sn = size - 1;
  let r = leafHash(leaf);
  for (const p of path) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn >>= 1;
          sn >>= 1;
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 ? r : null;
}

function largestPowerOfTwoBelow(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}
