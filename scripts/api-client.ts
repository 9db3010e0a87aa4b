import { writeFile } from 'node:fs/promises';
import { CLIENT_TYPES_FILE, clientTypesSource } from './api-client-source';

/** `npm run api:client`: regenerates lib/api-client/schema.ts from the OpenAPI document; lib/api-client/schema.test.ts fails when it is stale. */
await writeFile(CLIENT_TYPES_FILE, await clientTypesSource());
console.log(`wrote ${CLIENT_TYPES_FILE}`);
