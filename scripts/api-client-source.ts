import openapiTS, { astToString } from 'openapi-typescript';
import prettier from 'prettier';
import { openApiDocument } from '@/lib/openapi/document';

/** The TypeScript types of the OpenAPI document (openapi-typescript), formatted as the repository formats. */
export const CLIENT_TYPES_FILE = 'lib/api-client/schema.ts';

export async function clientTypesSource(): Promise<string> {
  const ast = await openapiTS(structuredClone(openApiDocument()) as unknown as Parameters<typeof openapiTS>[0]);
  const header =
    '/* Generated from /api/v1/openapi.json by `npm run api:client` (openapi-typescript). Do not edit. */\n/* eslint-disable @typescript-eslint/consistent-type-definitions -- openapi-typescript writes interfaces */\n';
  const options = (await prettier.resolveConfig(CLIENT_TYPES_FILE)) ?? {};
  return prettier.format(header + astToString(ast), { ...options, filepath: CLIENT_TYPES_FILE });
}
