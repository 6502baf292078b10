// A gateway started through a wrapper (`pnpm toolgate …`, `npx toolgate …`, `tsx …`, `sh -c …`) stops
// when that wrapper is gone: wrappers do not always pass a signal on, and one that is killed leaves
// its child orphaned, still serving. The wrappers above the gateway are found once at start (on Linux
// through /proc; elsewhere the direct parent), then polled; a shell or service manager that started
// it directly is not watched, so a gateway run under nohup, systemd or a container's init keeps serving.

import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

export interface ParentWatch {
  stop(): void;
}

export interface ParentWatchOptions {
  /** How often the wrappers are checked. Default 500 ms. */
  readonly intervalMs?: number;
  /** Where process facts are read; default `/proc` (absent outside Linux). */
  readonly procRoot?: string;
}

interface Ancestor {
  readonly pid: number;
  /** Start time in clock ticks since boot: a reused pid is another process. */
  readonly started: string;
  readonly name: string;
}

/** Programs that only start another program and wait for it. */
const WRAPPERS = /^(node|nodejs|npm|npx|pnpm|pnpx|yarn|tsx|bun|bunx|corepack|npm exec .*|npm-cli.*)$/;
const SHELLS = /^(sh|dash|bash|zsh|ash|busybox)$/;
/** How far up the chain is looked at. */
const MAX_DEPTH = 8;

/** Calls `onGone` once, naming the wrapper, when a wrapper the gateway runs under has exited. */
export function watchParent(onGone: (why: string) => void, options: ParentWatchOptions = {}): ParentWatch {
  const proc = options.procRoot ?? '/proc';
  const firstParent = process.ppid;
  const ancestors = wrappersAbove(process.pid, proc);
  // Without /proc only the direct parent can be watched, and it is, whatever it is.
  const watchParentPid = ancestors === undefined || ancestors.some((a) => a.pid === firstParent);
  if (firstParent <= 1 || (ancestors !== undefined && ancestors.length === 0)) return { stop() {} };

  let done = false;
  const timer = setInterval(() => {
    if (done) return;
    let why: string | undefined;
    if (watchParentPid && process.ppid !== firstParent)
      why = `its parent process (pid ${firstParent}) exited`;
    for (const ancestor of ancestors ?? []) {
      if (why !== undefined) break;
      if (statOf(ancestor.pid, proc)?.started !== ancestor.started)
        why = `the ${ancestor.name} it runs under (pid ${ancestor.pid}) exited`;
    }
    if (why === undefined) return;
    done = true;
    clearInterval(timer);
    onGone(why);
  }, options.intervalMs ?? 500);
  timer.unref();
  return {
    stop() {
      done = true;
      clearInterval(timer);
    },
  };
}

/** The unbroken run of wrappers above `pid`, nearest first; undefined where /proc cannot be read. */
function wrappersAbove(pid: number, proc: string): Ancestor[] | undefined {
  const self = statOf(pid, proc);
  if (self === undefined) return undefined;
  const found: Ancestor[] = [];
  let parent = self.ppid;
  while (parent > 1 && found.length < MAX_DEPTH) {
    const stat = statOf(parent, proc);
    const name = stat === undefined ? undefined : wrapperName(stat.name, parent, proc);
    if (stat === undefined || name === undefined) break;
    found.push({ pid: parent, started: stat.started, name });
    parent = stat.ppid;
  }
  return found;
}

/** The wrapper's name for a log line (`pnpm`, `node`, `sh -c`), or undefined when it is no wrapper. */
function wrapperName(comm: string, pid: number, proc: string): string | undefined {
  const argv = commandLine(pid, proc);
  // Node names its main thread (`comm`) "MainThread", and npm retitles itself ("npm exec …"): the
  // program is known by its command line as much as by `comm`.
  const program = basename(argv[0]?.split(' ')[0] ?? '');
  const title = argv[0] ?? '';
  if (WRAPPERS.test(program)) return program;
  if ([comm, title].some((name) => WRAPPERS.test(name))) return comm;
  // `sh -c "toolgate gateway"` as a package manager runs a script; an interactive shell is not one.
  if ([comm, program].some((name) => SHELLS.test(name)) && argv[1] === '-c') return `${comm} -c`;
  return undefined;
}

/** `comm`, parent pid and start time of `pid` from /proc/<pid>/stat; undefined when it is gone. */
function statOf(pid: number, proc: string): { name: string; ppid: number; started: string } | undefined {
  let text: string;
  try {
    text = readFileSync(`${proc}/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The name is in parentheses and may hold spaces or parentheses itself: fields follow the last ')'.
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return undefined;
  const fields = text.slice(close + 2).split(' ');
  // After the name: state, ppid, …; starttime is field 22 of the whole line, 20 after the name.
  const ppid = Number(fields[1]);
  const started = fields[19];
  if (!Number.isInteger(ppid) || started === undefined) return undefined;
  // A zombie has exited; only its parent has not collected it yet.
  if (fields[0] === 'Z') return undefined;
  return { name: text.slice(open + 1, close), ppid, started };
}

function commandLine(pid: number, proc: string): string[] {
  try {
    return readFileSync(`${proc}/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return [];
  }
}
