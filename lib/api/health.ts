import { z } from 'zod';
import { publicContract } from '@/lib/http/contract';

/** Liveness: the console process serves requests. Reads nothing. */
export const getHealth = publicContract({ path: '/api/health', output: z.object({ status: z.literal('ok') }) });

/**
 * Readiness: the database answers and every migration this build ships with is applied.
 * Otherwise 503 `{ error: 'unavailable' }`; why is in the console's log, never in the answer.
 */
export const getReady = publicContract({ path: '/api/ready', output: z.object({ status: z.literal('ready') }) });
