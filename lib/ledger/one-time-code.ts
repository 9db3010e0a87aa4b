import { randomFillSync } from 'node:crypto';

/**
 * The credential a notice carries beside its signed recipient-page link (lib/recipient/page-link.ts). It is
 * minted once, for the notice's first claim (its message is composed with it just before), stored on the ledger row and reused by every
 * deliberate resend: minting a new one would silently break the email already delivered.
 */

const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const CODE_LENGTH = 10;

/**
 * Random bytes drawn 2 KB at a time, as Node's own randomUUID does: one `randomBytes(10)` per
 * notice was 10 µs of the batched worker's CPU (a system call into OpenSSL's generator each
 * time), 2 % of a notice (issue 27). Each byte is handed out once and wiped as it is taken.
 */
const pool = Buffer.alloc(CODE_LENGTH * 204);
let offset = pool.length;

export function mintOneTimeCode(): string {
  if (offset + CODE_LENGTH > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  // 10 base32-ish characters people can type; 50 bits is plenty for a code bound to one notice.
  // 256 is a multiple of 32: `byte % 32` favours no character.
  let code = '';
  for (let i = offset; i < offset + CODE_LENGTH; i += 1) code += alphabet[(pool[i] as number) % alphabet.length];
  pool.fill(0, offset, offset + CODE_LENGTH);
  offset += CODE_LENGTH;
  return code;
}
