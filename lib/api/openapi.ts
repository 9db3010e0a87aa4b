import { z } from 'zod';
import { publicContract } from '@/lib/http/contract';

/** The OpenAPI 3.1 document of every route but the console's (lib/openapi/document.ts builds it from lib/api/routes.ts). */
export const getOpenApiDocument = publicContract({
  path: '/api/v1/openapi.json',
  output: z.looseObject({
    openapi: z.literal('3.1.1'),
    info: z.looseObject({ title: z.string(), version: z.string() }),
    paths: z.record(z.string(), z.unknown()),
  }),
});
