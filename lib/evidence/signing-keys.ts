import { createHmac, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

/**
 * The Ed25519 keys chain heads are signed with (EVIDENCE_SIGNING_KEYS), on the pattern of
 * lib/recipient/link-keys.ts: a comma-separated list of `kid:secret`, the first signs, every
 * listed key is published at /.well-known/notice-ledger/keys.json, so a pack signed before a
 * rotation still verifies for as long as its key stays listed. A key whose private half is gone
 * stays verifiable as `kid:public:<base64url x>` (the `x` of its JWK).
 *
 *   EVIDENCE_SIGNING_KEYS=2027a:<32+ characters>,2026a:public:11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo
 *
 * A secret is stretched to the key's seed with HMAC-SHA256, so any 32+ character secret makes a
 * key; `derived` (the default, `0:derived`) derives it from NOTICE_KEY_SECRET for this use alone.
 * Packs are kept for years: retire a key by replacing its secret with `public:<x>`, never by
 * removing it.
 */

export type SigningKeySpec = { kid: string; secret: string } | { kid: string; publicX: string };

export type EvidenceKey = { kid: string; publicKey: KeyObject; privateKey: KeyObject | null };

export type EvidenceKeyRing = { signing: EvidenceKey; byKid: ReadonlyMap<string, EvidenceKey> };

export type PublicJwk = { kty: 'OKP'; crv: 'Ed25519'; x: string; kid: string; use: 'sig'; alg: 'EdDSA' };

export const DEFAULT_EVIDENCE_SIGNING_KEYS = '0:derived';
const DERIVED = 'derived';
const kidPattern = /^[A-Za-z0-9._-]{1,32}$/;
const secretPattern = /^[A-Za-z0-9+/=_.-]{32,}$/;
const xPattern = /^[A-Za-z0-9_-]{43}$/;
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export function parseSigningKeys(text: string): { ok: true; specs: SigningKeySpec[] } | { ok: false; message: string } {
  const specs: SigningKeySpec[] = [];
  for (const [index, raw] of text.split(',').entries()) {
    const position = `entry ${String(index + 1)}`;
    const [kid = '', secret = '', x, ...rest] = raw.trim().split(':');
    if (rest.length > 0 || secret === '') return { ok: false, message: `${position} must be kid:secret or kid:public:<x>` };
    if (!kidPattern.test(kid)) return { ok: false, message: `${position}: a key id is 1–32 of A-Z a-z 0-9 . _ -` };
    if (specs.some((spec) => spec.kid === kid)) return { ok: false, message: `key id ${kid} is listed twice` };
    if (secret === 'public') {
      if (x === undefined || !xPattern.test(x))
        return { ok: false, message: `${position} (key ${kid}): public:<x> takes the 43-character base64url x of an Ed25519 JWK` };
      if (index === 0) return { ok: false, message: `the first key (${kid}) signs new heads and needs its secret, not only its public half` };
      specs.push({ kid, publicX: x });
      continue;
    }
    if (x !== undefined) return { ok: false, message: `${position} must be kid:secret or kid:public:<x>` };
    if (secret !== DERIVED && !secretPattern.test(secret)) {
      return {
        ok: false,
        message: `${position} (key ${kid}): the secret must be at least 32 characters of A-Z a-z 0-9 + / = _ . - (use \`openssl rand -hex 32\`), or "derived"`,
      };
    }
    specs.push({ kid, secret });
  }
  return { ok: true, specs };
}

function privateKeyOf(secret: string, noticeKeySecret: string): KeyObject {
  const seed =
    secret === DERIVED
      ? createHmac('sha256', noticeKeySecret).update('notice-ledger/evidence-signing/derived', 'utf8').digest()
      : createHmac('sha256', secret).update('notice-ledger/evidence-signing/v1', 'utf8').digest();
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

export function evidenceKeyRing({ specs, noticeKeySecret }: { specs: readonly SigningKeySpec[]; noticeKeySecret: string }): EvidenceKeyRing {
  const keys = specs.map((spec): EvidenceKey => {
    if ('publicX' in spec)
      return { kid: spec.kid, privateKey: null, publicKey: createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: spec.publicX }, format: 'jwk' }) };
    const privateKey = privateKeyOf(spec.secret, noticeKeySecret);
    return { kid: spec.kid, privateKey, publicKey: createPublicKey(privateKey) };
  });
  const [signing] = keys;
  if (!signing?.privateKey) throw new RangeError('an evidence key ring needs a signing key');
  return { signing, byKid: new Map(keys.map((key) => [key.kid, key])) };
}

export function publicJwkOf(key: EvidenceKey): PublicJwk {
  const jwk = key.publicKey.export({ format: 'jwk' });
  return { kty: 'OKP', crv: 'Ed25519', x: String(jwk.x), kid: key.kid, use: 'sig', alg: 'EdDSA' };
}

/** The document served at /.well-known/notice-ledger/keys.json. */
export function publicKeySet(ring: EvidenceKeyRing): { keys: PublicJwk[] } {
  return { keys: [...ring.byKid.values()].map(publicJwkOf) };
}

export function signPayload(ring: EvidenceKeyRing, payload: string): { kid: string; signature: string } {
  const { signing } = ring;
  if (!signing.privateKey) throw new RangeError('the signing key has no private half');
  return { kid: signing.kid, signature: sign(null, Buffer.from(payload, 'utf8'), signing.privateKey).toString('base64url') };
}

/** Checks an Ed25519 signature against a published key (a JWK); false for anything malformed. */
export function verifySignature({
  jwk,
  payload,
  signature,
}: {
  jwk: { kty?: unknown; crv?: unknown; x?: unknown };
  payload: string;
  signature: string;
}): boolean {
  try {
    if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') return false;
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
    return verify(null, Buffer.from(payload, 'utf8'), key, Buffer.from(signature, 'base64url'));
  } catch {
    return false;
  }
}
