// Lexical path normalization for the path guard: every way a path can say "go up" or "start
// elsewhere" is resolved the way the most permissive reader (a shell, Windows, a URL decoder)
// would, and a path is judged in each of its readings. Nothing touches a file system.

/** Why a path cannot be judged inside its roots. */
export type PathProblem = 'outside' | 'nul' | 'encoding' | 'not-a-path' | 'relative';

/** A root, normalized: lower-cased drive for Windows roots, no trailing separator. */
export interface Root {
  readonly text: string;
  readonly windows: boolean;
}

const MAX_DECODES = 4;
const PERCENT = /%[0-9A-Fa-f]{2}/;
const DRIVE = /^[A-Za-z]:/;

/** `value` and each of its percent-decoded and NFKC forms; 'encoding' when a decode fails. */
function readings(value: string): string[] | 'encoding' {
  const out = [value];
  let current = value;
  for (let i = 0; i < MAX_DECODES && PERCENT.test(current); i++) {
    try {
      current = decodeURIComponent(current);
    } catch {
      // Overlong or broken UTF-8 (`%c0%ae`): some decoders still read it as '.', so refuse it.
      return 'encoding';
    }
    out.push(current);
  }
  // Fullwidth dots and solidi (`．．／`) become `../` under NFKC, which some file systems apply.
  for (const form of [...out]) {
    const folded = form.normalize('NFKC');
    if (folded !== form) out.push(folded);
  }
  return out;
}

/** Segments of an absolute or relative path with `.` and `..` resolved; undefined when a relative path climbs above its start. */
function normalized(path: string): { absolute: string | undefined; segments: string[] } | undefined {
  const unified = path.replace(/\\/g, '/');
  let absolute: string | undefined;
  let rest = unified;
  if (DRIVE.test(unified)) {
    absolute = unified.slice(0, 2).toLowerCase();
    rest = unified.slice(2);
  } else if (unified.startsWith('/')) {
    absolute = '';
  }
  const segments: string[] = [];
  for (const raw of rest.split('/')) {
    // Windows drops trailing dots and spaces from a segment, so '.. ' and '...' also climb.
    const segment = /^[. ]+$/.test(raw) ? (raw.split('.').length > 2 ? '..' : '.') : raw;
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (segments.length === 0) {
        if (absolute === undefined) return undefined;
        continue;
      }
      segments.pop();
      continue;
    }
    segments.push(segment);
  }
  return { absolute, segments };
}

export function rootOf(text: string): Root {
  const read = normalized(text);
  if (read?.absolute === undefined) throw new TypeError(`'${text}' is not an absolute directory`);
  const windows = read.absolute !== '';
  const joined = `${read.absolute}/${read.segments.join('/')}`;
  return { text: windows ? joined.toLowerCase() : joined, windows };
}

function inside(absolute: string, segments: readonly string[], roots: readonly Root[]): boolean {
  const joined = `${absolute}/${segments.join('/')}`;
  return roots.some((root) => {
    const path = root.windows ? joined.toLowerCase() : joined;
    if (root.text === '/' || path === root.text) return true;
    return path.startsWith(`${root.text}/`);
  });
}

/** A relative `path` read against `base`, or `path` itself when it is absolute; undefined when it climbs above a relative start. */
function against(path: string, base: Root | undefined): ReturnType<typeof normalized> {
  const read = normalized(path);
  if (base === undefined || (read !== undefined && read.absolute !== undefined)) return read;
  return normalized(`${base.text}/${path.replace(/\\/g, '/')}`);
}

/**
 * Whether `value` stays under one of `roots` in every reading: backslashes as separators, `.`/`..`
 * resolved, percent-decoded up to four times, NFKC-folded. A relative path is read against `base`,
 * the directory the tool resolves it from; with no base it is 'relative', since the guard cannot
 * know what the tool will open. NUL, `~`, `file:` URLs, UNC and drive-relative paths are refused.
 */
export function pathProblem(value: string, roots: readonly Root[], base?: Root): PathProblem | undefined {
  const forms = readings(value);
  if (forms === 'encoding') return 'encoding';
  // A reading that leaves the roots outranks one that is merely relative: it is the sharper refusal.
  let relative = false;
  for (const form of forms) {
    if (form.includes('\0')) return 'nul';
    const unified = form.replace(/\\/g, '/');
    if (
      unified.startsWith('~') ||
      /^file:/i.test(unified) ||
      unified.startsWith('//') ||
      /^[A-Za-z]:(?!\/)/.test(unified)
    )
      return 'not-a-path';
    const read = against(form, base);
    if (read === undefined) return 'outside';
    if (read.absolute === undefined) relative = true;
    else if (!inside(read.absolute, read.segments, roots)) return 'outside';
  }
  return relative ? 'relative' : undefined;
}

/** The absolute, normalized path the tool opens for `value` (as written, not decoded), read against `base`. */
export function absolutePath(value: string, base: Root | undefined): string | undefined {
  const read = against(value, base);
  if (read?.absolute === undefined) return undefined;
  return `${read.absolute}/${read.segments.join('/')}`;
}

/** Whether an absolute path (as `absolutePath` gives it) lies under one of `roots`. */
export function isUnder(path: string, roots: readonly Root[]): boolean {
  const read = normalized(path);
  return read?.absolute !== undefined && inside(read.absolute, read.segments, roots);
}
