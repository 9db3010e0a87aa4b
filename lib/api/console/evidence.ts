import { z } from 'zod';
import { consoleContract } from '@/lib/http/contract';
import { evidencePackSchema } from '@/lib/api/evidence';

/** The lookup's "Evidence pack": the same pack as the producer API and the CLI (lib/evidence/export.ts), audited `evidence.export`. */
export const exportEvidencePackContract = consoleContract({
  method: 'GET',
  path: '/api/console/lookup/evidence',
  permission: 'lookup.read',
  input: z.object({ notice: z.union([z.uuid(), z.string().regex(/^[0-9a-f]{64}$/)], 'must be a reminder job id or a 64-hex notice key') }),
  output: evidencePackSchema,
});
