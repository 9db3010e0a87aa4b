import { z } from 'zod';

/**
 * Runs in the browser before the console's own code (Next's client start-up hook). zod compiles
 * object parsers with new Function() once it has probed that eval is allowed, at schema
 * construction; the console's CSP forbids eval (lib/http/security-headers.ts), so the probe alone
 * is a reported violation. The browser's schemas parse without compiling; the server (this file
 * never runs there) keeps the compiled parsers.
 */
z.config({ jitless: true });
