import { getEvidenceKeys } from '@/lib/api/evidence';
import { config, evidenceSigningKeys } from '@/lib/config';
import { publicKeySet } from '@/lib/evidence/signing-keys';
import { publicRoute } from '@/lib/http/public-route';
import { ok } from '@/lib/http/refusal';

export const dynamic = 'force-dynamic';

/** Every key in EVIDENCE_SIGNING_KEYS, so a pack signed before a rotation still verifies (`ledger evidence verify`). */
export const GET = publicRoute(getEvidenceKeys, async () => ok(publicKeySet(evidenceSigningKeys(config()))));
