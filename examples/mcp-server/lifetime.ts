// Ties the example server's life to the processes that started it. A wrapper such as `npx pnpm`
// may die without passing a signal on (its own parent keeps running and holds the port otherwise),
// so the server watches every ancestor, not only its parent, and stops when one is gone.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** The parent of `pid`, or undefined when the platform will not say. */
function parentOf(pid: number): number | undefined {
  try {
    // Linux: the fourth field of /proc/<pid>/stat, after the parenthesised command name.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return Number.isInteger(ppid) ? ppid : undefined;
  } catch {
    if (process.platform === 'win32') return undefined;
    try {
      const ppid = Number(
        execFileSync('ps', ['-o', 'ppid=', '-p', String(pid)], { encoding: 'utf8' }).trim(),
      );
      return Number.isInteger(ppid) ? ppid : undefined;
    } catch {
      return undefined;
    }
  }
}

/** This process's ancestors, nearest first, up to (not including) init. */
export function ancestors(): number[] {
  const found: number[] = [];
  let pid: number | undefined = process.ppid;
  while (pid !== undefined && pid > 1 && !found.includes(pid) && found.length < 64) {
    found.push(pid);
    pid = parentOf(pid);
  }
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Calls `gone` once when this process is reparented or any process that started it has exited.
 * The timer is unref'd: it never keeps the process alive by itself.
 */
export function whenStartersExit(gone: () => void, everyMs = 500): void {
  const parent = process.ppid;
  const starters = ancestors();
  const timer = setInterval(() => {
    if (process.ppid !== parent || !starters.every(alive)) {
      clearInterval(timer);
      gone();
    }
  }, everyMs);
  timer.unref();
}
