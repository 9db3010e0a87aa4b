import { z } from 'zod';
import { producerContract, publicContract } from '@/lib/http/contract';

/**
 * The evidence pack's JSON (one file per notice; README "Evidence packs"). Everything a verifier
 * needs besides the public key: each entry's exact canonical body and chain fields, its inclusion
 * path to a signed head, the signed heads with their signatures and time-stamp tokens. `record`,
 * `message` and `stripe` are readable views derived from the entries; `ledger evidence verify`
 * derives them again and names any that differ.
 */

const hex64 = z.string().regex(/^[0-9a-f]{64}$/);

export const packEntrySchema = z.strictObject({
  seq: z.number().int().min(1),
  prevHash: hex64,
  entryHash: hex64,
  noticeKey: z.string(),
  kind: z.string(),
  recordedAt: z.string(),
  /** The entry's body, byte for byte as hashed (RFC 8785). */
  body: z.string(),
  proof: z.strictObject({ headToSeq: z.number().int(), index: z.number().int().min(0), size: z.number().int().min(1), path: z.array(hex64) }),
});
export type PackEntry = z.infer<typeof packEntrySchema>;

export const packSignedHeadSchema = z.strictObject({
  toSeq: z.number().int(),
  kid: z.string(),
  payload: z.string(),
  signature: z.string(),
  timestampToken: z.string().nullable(),
});
export type PackSignedHead = z.infer<typeof packSignedHeadSchema>;

export const evidencePackSchema = z.strictObject({
  format: z.literal('notice-ledger/evidence-pack'),
  version: z.literal(1),
  exportedAt: z.string(),
  noticeKey: hex64,
  /** Where the public keys are published (verify fetches it when no --key is given). */
  keysUrl: z.string(),
  record: z.record(z.string(), z.unknown()),
  message: z.record(z.string(), z.unknown()).nullable(),
  stripe: z.strictObject({ cancellation_policy_disclosure: z.string(), cancellation_rebuttal: z.string(), customer_communication: z.string() }),
  entries: z.array(packEntrySchema),
  /**
   * The template pieces a sent entry's HTML trace names, by digest (SHA-256 of the canonical JSON
   * array): the static markup stored once per template rather than in every entry. Absent from a
   * pack whose entry holds its HTML whole.
   */
  pieces: z.record(hex64, z.array(z.string())).optional(),
  signedHeads: z.array(packSignedHeadSchema),
  /** Entries written but not yet under a signed head at export (export again after EVIDENCE_SIGN_EVERY). */
  unsignedEntries: z.number().int().min(0),
});
export type EvidencePack = z.infer<typeof evidencePackSchema>;

/** The evidence pack of a notice, by reminder job id or notice key (issue 28; lib/evidence/export.ts). */
export const getNoticeEvidenceRoute = producerContract({
  method: 'GET',
  path: '/api/v1/notices/{id}/evidence',
  scope: 'notices:read',
  params: z.object({ id: z.union([z.uuid(), hex64], 'must be a reminder job id or a 64-hex notice key') }),
  body: z.object({}),
  bodyOptional: true,
  output: evidencePackSchema,
});

const publicJwk = z.object({
  kty: z.literal('OKP'),
  crv: z.literal('Ed25519'),
  x: z.string(),
  kid: z.string(),
  use: z.literal('sig'),
  alg: z.literal('EdDSA'),
});

/** The public keys evidence heads are signed with (EVIDENCE_SIGNING_KEYS), every listed one: a JWKS. */
export const getEvidenceKeys = publicContract({ path: '/.well-known/notice-ledger/keys.json', output: z.object({ keys: z.array(publicJwk) }) });

export const evidenceRoutes = [getNoticeEvidenceRoute, getEvidenceKeys] as const;
