import { noticeKey } from '@/lib/ledger/notice-key';

/**
 * Prints the notice key of the fact given as JSON in argv[3] under the secret in argv[2]: a tool
 * that derives keys with nothing but its secret in hand, as the demo's and the e2e seed do.
 */
const [secret = '', fact = '{}'] = process.argv.slice(2);
console.log(noticeKey(secret, JSON.parse(fact)));
