import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { passwordHashSettings } from '@/lib/config';
import { passwordHashGate } from './hash-gate';

/**
 * Passwords are stored self-describing, `scrypt$N$r$p$salt$hash` (salt and hash base64url),
 * so the cost can be raised later and old hashes still verify with the cost they were made with;
 * a sign-in with an older cost rehashes at this one (needsRehash).
 * N=2^17, r=8, p=1 is OWASP's Password Storage Cheat Sheet minimum for scrypt: 128 MiB and
 * ~0.35 s per check here (PASSWORD_HASH_N sets N). Every computation goes through the
 * process's hash gate (hash-gate.ts).
 */
let cost: ScryptCost | undefined;
export function currentCost(): ScryptCost {
  cost ??= { N: passwordHashSettings().PASSWORD_HASH_N, r: 8, p: 1 };
  return cost;
}
const KEY_LENGTH = 32;
// scrypt needs 128·N·r bytes plus a little: 2× the default's 128 MiB leaves room for a raised r.
const MAX_MEMORY = 256 * 1024 * 1024;

export type ScryptCost = { N: number; r: number; p: number };

function scrypt(password: string, salt: Buffer, cost: ScryptCost, length: number): Promise<Buffer> {
  const options: ScryptOptions = { N: cost.N, r: cost.r, p: cost.p, maxmem: MAX_MEMORY };
  return passwordHashGate().run(
    () =>
      new Promise<Buffer>((resolve, reject) => {
        scryptCallback(password.normalize('NFKC'), salt, length, options, (error, key) => (error ? reject(error) : resolve(key)));
      }),
  );
}

export async function hashPassword(password: string, cost: ScryptCost = currentCost()): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, cost, KEY_LENGTH);
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

type ParsedHash = { cost: ScryptCost; salt: Buffer; hash: Buffer };

export function parsePasswordHash(stored: string): ParsedHash | null {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  if (N === undefined || r === undefined || p === undefined) return null;
  if (![N, r, p].every((n) => Number.isInteger(n) && n > 0)) return null;
  // N must be a power of two; refuse absurd costs so a tampered row cannot stall the process.
  if ((N & (N - 1)) !== 0 || N > 1_048_576 || r > 32 || p > 16) return null;
  const salt = Buffer.from(parts[4] ?? '', 'base64url');
  const hash = Buffer.from(parts[5] ?? '', 'base64url');
  if (salt.length < 8 || hash.length < 16) return null;
  return { cost: { N, r, p }, salt, hash };
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parsePasswordHash(stored);
  if (!parsed) return false;
  const candidate = await scrypt(password, parsed.salt, parsed.cost, parsed.hash.length);
  return timingSafeEqual(candidate, parsed.hash);
}

/** A stored hash made with a smaller N than the current cost's: rehash it at the next sign-in. */
export function needsRehash(stored: string): boolean {
  const parsed = parsePasswordHash(stored);
  return parsed !== null && parsed.cost.N < currentCost().N;
}

/**
 * Compared against when the email is unknown, so "no such user" costs the same time as
 * "wrong password" and sign-in timing does not reveal which emails exist.
 */
let dummyHash: Promise<string> | undefined;
export function dummyPasswordHash(): Promise<string> {
  dummyHash ??= hashPassword(randomBytes(16).toString('hex'));
  return dummyHash;
}
