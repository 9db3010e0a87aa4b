import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

/**
 * CPU seconds spent by processes, read from /proc (Linux): how a benchmark's two cores were
 * split between PostgreSQL, the worker processes and the benchmark itself (client, SMTP peer).
 */
const TICKS = 100; // USER_HZ on Linux

/** utime + stime (+ reaped children's, when asked) of one process, in seconds; 0 once it is gone. */
function processSeconds(pid: number, withReapedChildren = false): number {
  try {
    const stat = readFileSync(`/proc/${String(pid)}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start at index 2 (state).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const [utime, stime, cutime, cstime] = [fields[11], fields[12], fields[13], fields[14]].map(Number);
    return ((utime ?? 0) + (stime ?? 0) + (withReapedChildren ? (cutime ?? 0) + (cstime ?? 0) : 0)) / TICKS;
  } catch {
    return 0;
  }
}

function childrenOf(parent: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent) children.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

/** The embedded server's postmaster pid (postmaster.pid, line 1), or null for an external server. */
export function postmasterOf(dataDir: string | null): number | null {
  if (!dataDir) return null;
  try {
    const pid = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isFinite(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** Every CPU second the server has used: postmaster, live backends, and backends already gone. */
export function serverSeconds(postmaster: number | null): number {
  if (postmaster === null) return Number.NaN;
  return processSeconds(postmaster, true) + childrenOf(postmaster).reduce((sum, pid) => sum + processSeconds(pid), 0);
}

export function pidSeconds(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + processSeconds(pid), 0);
}

export function selfSeconds(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}

/**
 * The local RabbitMQ broker's pid (the Erlang VM running `rabbit`), so its CPU counts in the
 * budget too; null when AMQP_URL points elsewhere or no such process is visible.
 */
export function brokerPid(amqpUrl: string): number | null {
  const host = new URL(amqpUrl).hostname;
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(host)) return null;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (cmdline[0]?.endsWith('/beam.smp') && cmdline.includes('rabbit')) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return null;
}
