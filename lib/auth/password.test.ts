import { describe, expect, it } from 'vitest';
import { hashPassword, needsRehash, parsePasswordHash, verifyPassword } from './password';
import { envSchema } from '@/lib/config';

const cheap = { N: 1024, r: 8, p: 1 };

describe('password hashing', () => {
  it('writes the self-describing scrypt format and verifies it', async () => {
    const stored = await hashPassword('correct horse battery staple', cheap);
    expect(stored).toMatch(/^scrypt\$1024\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(await verifyPassword('correct horse battery staple', stored)).toBe(true);
    expect(await verifyPassword('correct horse battery stapl', stored)).toBe(false);
  });

  it('uses a fresh salt per hash', async () => {
    expect(await hashPassword('same', cheap)).not.toBe(await hashPassword('same', cheap));
  });

  it("defaults to OWASP's scrypt minimum (N=2^17, r=8, p=1) and verifies with whatever cost the hash records", async () => {
    expect(envSchema.shape.PASSWORD_HASH_N.parse(undefined)).toBe(131_072);
    const strong = await hashPassword('pw', { N: 131_072, r: 8, p: 1 });
    expect(parsePasswordHash(strong)?.cost).toEqual({ N: 131_072, r: 8, p: 1 });
    expect(await verifyPassword('pw', strong)).toBe(true);
    expect(needsRehash(strong)).toBe(false);
    // The suite runs with PASSWORD_HASH_N=1024 (vitest.config.ts): a hash below it is rehashed.
    expect(needsRehash(await hashPassword('pw', { N: 512, r: 8, p: 1 }))).toBe(true);
    expect(needsRehash(await hashPassword('pw'))).toBe(false);
  });

  it('normalises Unicode so the same password typed differently still matches', async () => {
    const stored = await hashPassword('caf\u00e9', cheap);
    expect(await verifyPassword('cafe\u0301', stored)).toBe(true);
  });

  it('refuses malformed or tampered hashes instead of throwing', async () => {
    for (const bad of [
      '',
      'bcrypt$10$x',
      'scrypt$1000$8$1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA',
      'scrypt$4194304$8$1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA',
      'scrypt$1024$8$1$$',
    ]) {
      expect(parsePasswordHash(bad)).toBeNull();
      expect(await verifyPassword('x', bad)).toBe(false);
    }
  });
});
