import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Db } from '@/db/client';
import { config, publicBaseUrl } from '@/lib/config';
import { exportNoticeEvidence } from '@/lib/evidence/export';
import { renderEvidencePackHtml } from '@/lib/evidence/pack-html';
import { verifyEvidencePack, type PublicKeys } from '@/lib/evidence/verify-pack';

/**
 * `npm run ledger -- evidence …` (README "Evidence packs"): export a notice's pack from the
 * database, and verify a pack with no database at all — only the public keys, from `--key` (a
 * JWKS or JWK file, or a URL) or else the pack's own keysUrl. Exit codes: 0 holds / written,
 * 1 does not hold (each failed part named) or refused, 2 usage.
 */

export const evidenceUsage = `evidence export --notice <job id | notice key> --out <file.json>
    writes the notice's evidence pack (JSON) and its HTML rendering beside it (<file>.html)
evidence verify <file.json> [--key <keys.json file | URL>]
    checks every hash, inclusion path, signature and time-stamp; needs no database
    (without --key, the public keys are fetched from the pack's keysUrl)`;

type Io = { out: (line: string) => void; err: (line: string) => void };

const defaultIo: Io = { out: (line) => console.log(line), err: (line) => console.error(line) };

function optionOf(args: readonly string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
}

async function loadKeys(source: string): Promise<PublicKeys> {
  let text: string;
  if (/^https?:\/\//.test(source)) {
    const response = await fetch(source, { signal: AbortSignal.timeout(10_000) });
    if (!response.ok) throw new Error(`${source} answered HTTP ${String(response.status)}`);
    text = await response.text();
  } else {
    if (!existsSync(source)) throw new Error(`no such key file: ${source}`);
    text = readFileSync(source, 'utf8');
  }
  const parsed = JSON.parse(text) as unknown;
  if (parsed && typeof parsed === 'object' && 'keys' in parsed && Array.isArray(parsed.keys)) return { keys: parsed.keys as PublicKeys['keys'] };
  if (parsed && typeof parsed === 'object' && 'kty' in parsed) return { keys: [parsed as PublicKeys['keys'][number]] };
  throw new Error(`${source} holds neither a JWKS ({ "keys": [...] }) nor a JWK`);
}

/** verify: no database is opened, nor any setting read. */
export async function verifyPackFile(args: readonly string[], io: Io = defaultIo): Promise<number> {
  const file = args.find((arg, index) => !arg.startsWith('--') && args[index - 1] !== '--key');
  if (!file) {
    io.err(`ledger: evidence verify needs a file\n\n${evidenceUsage}`);
    return 2;
  }
  let pack: unknown;
  try {
    pack = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    io.err(`ledger: ${file} is not a readable JSON file (${error instanceof Error ? error.message : String(error)})`);
    return 1;
  }
  const keySource =
    optionOf(args, '--key') ?? (pack && typeof pack === 'object' && 'keysUrl' in pack && typeof pack.keysUrl === 'string' ? pack.keysUrl : undefined);
  if (!keySource) {
    io.err('ledger: no public keys: give --key <keys.json file | URL>');
    return 2;
  }
  let publicKeys: PublicKeys;
  try {
    publicKeys = await loadKeys(keySource);
  } catch (error) {
    io.err(`ledger: public keys: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  const verdict = await verifyEvidencePack(pack, { publicKeys });
  if (!verdict.ok) {
    io.err(`ledger: the pack does NOT hold (${String(verdict.failures.length)} problem${verdict.failures.length === 1 ? '' : 's'}):`);
    for (const failure of verdict.failures) io.err(`  - ${failure}`);
    return 1;
  }
  const { entries, signedHeads, timestamps, tsa } = verdict.checked;
  io.out(
    `the pack holds: ${String(entries)} entries, ${String(signedHeads)} signed head${signedHeads === 1 ? '' : 's'}, ${String(timestamps)} time-stamp${timestamps === 1 ? '' : 's'}${tsa.length > 0 ? ` (TSA: ${tsa.join('; ')})` : ''}`,
  );
  return 0;
}

export async function exportPackFile(db: Db, args: readonly string[], io: Io = defaultIo): Promise<number> {
  const notice = optionOf(args, '--notice');
  const out = optionOf(args, '--out');
  if (!notice || !out || !/^([0-9a-f]{64}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/.test(notice)) {
    io.err(`ledger: evidence export needs --notice <job id | 64-hex notice key> and --out <file>\n\n${evidenceUsage}`);
    return 2;
  }
  const result = await exportNoticeEvidence(db, { id: notice, baseUrl: publicBaseUrl(config()) });
  if (!result.ok) {
    io.err(`ledger: ${result.refusal.message}`);
    return 1;
  }
  const htmlFile = `${out.replace(/\.json$/, '')}.html`;
  writeFileSync(out, `${JSON.stringify(result.data, null, 2)}\n`);
  writeFileSync(htmlFile, renderEvidencePackHtml(result.data));
  io.out(
    `wrote ${path.resolve(out)} and ${path.resolve(htmlFile)} (${String(result.data.entries.length)} signed entries${result.data.unsignedEntries > 0 ? `; ${String(result.data.unsignedEntries)} not signed yet — export again after EVIDENCE_SIGN_EVERY` : ''})`,
  );
  return 0;
}
