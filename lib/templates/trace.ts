import { canonicalJson, sha256Hex } from '@/lib/evidence/hash';
import type { RenderTrace, TemplatePieces } from './compiled';

/**
 * A render trace as the evidence record stores it (lib/evidence/record.ts): each template's static
 * pieces named by their digest, the SHA-256 of their canonical JSON array, and kept once
 * (evidence_pieces); the parts a notice filled in, in order, with a nested render (the layout's
 * `{{ body }}`) as a trace of its own. `joinTrace` gives the output back byte for byte from the
 * trace and the pieces, and needs nothing else: `ledger evidence verify` runs it with no database.
 */

export type StoredTracePart = number | string | StoredTrace;
export type StoredTrace = { pieces: string; parts: StoredTracePart[] };

const digests = new WeakMap<TemplatePieces, string>();

/** The pieces' digest, once per compiled template. */
export function piecesDigest(pieces: TemplatePieces): string {
  let digest = digests.get(pieces);
  if (digest === undefined) {
    digest = piecesDigestOf(pieces.texts);
    digests.set(pieces, digest);
  }
  return digest;
}

export const piecesDigestOf = (texts: readonly string[]) => sha256Hex(canonicalJson(texts));

/** Pieces as stored (their canonical JSON array), or null for text that is not an array of strings (a row edited). */
export function parsedPieces(stored: string): string[] | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stored);
  } catch {
    return null;
  }
  return Array.isArray(parsed) && parsed.every((text) => typeof text === 'string') ? (parsed as string[]) : null;
}

/** The trace with its pieces named by digest, and every pieces list it names (for storing them first). */
export function storedTrace(trace: RenderTrace): { trace: StoredTrace; pieces: Map<string, TemplatePieces> } {
  const pieces = new Map<string, TemplatePieces>();
  const walk = (node: RenderTrace): StoredTrace => {
    const digest = piecesDigest(node.pieces);
    pieces.set(digest, node.pieces);
    return { pieces: digest, parts: node.parts.map((part) => (typeof part === 'object' ? walk(part) : part)) };
  };
  return { trace: walk(trace), pieces };
}

/** The pieces a trace names, by digest, nested ones included (without building its stored form). */
export function tracePieces(trace: RenderTrace): Map<string, TemplatePieces> {
  const pieces = new Map<string, TemplatePieces>();
  const walk = (node: RenderTrace) => {
    pieces.set(piecesDigest(node.pieces), node.pieces);
    for (const part of node.parts) if (typeof part === 'object') walk(part);
  };
  walk(trace);
  return pieces;
}

export type JoinedTrace = { ok: true; text: string } | { ok: false; problem: string };

const MAX_DEPTH = 8;

/**
 * The output a trace stands for, from the pieces by digest. Anything that is not a trace — a
 * part of another type, an index no piece has, pieces missing or not matching their digest — is
 * a problem named, never a guess: a pack's verification reports it.
 */
export function joinTrace(trace: unknown, pieces: Readonly<Record<string, readonly string[]>>): JoinedTrace {
  const checked = new Map<string, boolean>();
  const join = (node: unknown, depth: number): string => {
    if (depth > MAX_DEPTH) throw new TraceProblem('the trace nests too deep');
    if (typeof node !== 'object' || node === null || Array.isArray(node)) throw new TraceProblem('a trace is not an object');
    const { pieces: digest, parts } = node as { pieces?: unknown; parts?: unknown };
    if (typeof digest !== 'string' || !Array.isArray(parts)) throw new TraceProblem('a trace has no pieces digest or parts');
    const texts = Object.hasOwn(pieces, digest) ? pieces[digest] : undefined;
    if (!texts) throw new TraceProblem(`template pieces ${digest.slice(0, 12)}… are not there`);
    if (!checked.has(digest)) {
      checked.set(digest, true);
      if (!Array.isArray(texts) || texts.some((text) => typeof text !== 'string') || piecesDigestOf(texts) !== digest)
        throw new TraceProblem(`template pieces ${digest.slice(0, 12)}… do not match their digest`);
    }
    let out = '';
    for (const part of parts as unknown[]) {
      if (typeof part === 'string') out += part;
      else if (typeof part === 'number') {
        const text = Number.isInteger(part) ? texts[part] : undefined;
        if (text === undefined) throw new TraceProblem(`template pieces ${digest.slice(0, 12)}… have no piece ${String(part)}`);
        out += text;
      } else out += join(part, depth + 1);
    }
    return out;
  };
  try {
    return { ok: true, text: join(trace, 0) };
  } catch (error) {
    if (error instanceof TraceProblem) return { ok: false, problem: error.message };
    throw error;
  }
}

class TraceProblem extends Error {}
