import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLIENT_TYPES_FILE, clientTypesSource } from '@/scripts/api-client-source';

/** The committed client types are what the document generates now: a contract changed without `npm run api:client` fails here. */
describe('lib/api-client/schema.ts', () => {
  it('is up to date with the OpenAPI document (run npm run api:client)', async () => {
    const committed = await readFile(path.resolve(import.meta.dirname, '..', '..', CLIENT_TYPES_FILE), 'utf8');
    expect(committed === (await clientTypesSource()), 'lib/api-client/schema.ts is stale: run npm run api:client').toBe(true);
  });

  it('a change to the document changes the generated file (the control)', async () => {
    const generated = await clientTypesSource();
    expect(generated).toContain("'/api/v1/reminders'");
    expect(generated.replace("'/api/v1/reminders'", "'/api/v1/reminderz'")).not.toBe(generated);
  });
});
