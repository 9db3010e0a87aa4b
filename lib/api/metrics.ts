import { z } from 'zod';
import { scrapeContract } from '@/lib/http/contract';

/** The console's Prometheus endpoint; the answer is the text exposition format. */
export const scrapeConsoleMetrics = scrapeContract({ path: '/api/metrics', output: z.string() });
