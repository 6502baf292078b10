// Values first: a tool imported over MCP declares nothing, so the egress, path and command guards
// also read every argument value by its shape (a URL, a path, a shell line) whatever the schema
// says. Each shape test is anchored and bounded, so reading a value is linear in it, and each is
// narrow enough that everyday arguments (the reference servers' calls in test/benign-calls.ts)
// never match: prose that mentions a path or a command is not a path or a command.

import { someString } from './values';

/** Every string value in `args` (keys are not values) with where it stands, `to.0`. */
export function stringValues(args: unknown): { at: string; value: string }[] {
  const out: { at: string; value: string }[] = [];
  someString(args, (value, at) => (out.push({ at, value }), false), { keys: false });
  return out;
}

// A value that is a URL with an authority: what a tool would connect to. Schemes past http(s) are
// here because a tool that takes one reaches a gopher or a redis port just the same (a `file:` URL
// is a path, and the path guard's).
const URL_SHAPE =
  /^\s{0,8}(?:https?|wss?|ftps?|sftp|gopher|dict|ldaps?|tftp|smb|redis|mongodb(?:\+srv)?|postgres(?:ql)?|mysql|jdbc:[a-z]{1,16}):\/\/\S/i;
// A bare address with an optional port: '169.254.169.254', '[::1]:8080', 'localhost:6379'.
const HOST_SHAPE =
  /^(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9A-Fa-f:.]{2,45}\]|localhost|(?:0x[0-9a-f]{1,8}))(?::\d{1,5})?\/?$/i;

/** `'url'` when `value` is a URL, `'host'` when it is a bare address; undefined otherwise. */
export function destinationShape(value: string): 'url' | 'host' | undefined {
  if (value.length > 8192) return undefined;
  if (URL_SHAPE.test(value)) return 'url';
  if (HOST_SHAPE.test(value.trim())) return 'host';
  return undefined;
}

/** The host (and port) of a bare address value, as the egress guard reads hosts. */
export function hostOfShape(value: string): string {
  const trimmed = value.trim().replace(/\/$/, '');
  if (trimmed.startsWith('[')) return trimmed.slice(1, trimmed.indexOf(']'));
  return trimmed.replace(/:\d{1,5}$/, '');
}

// One token that starts like a path, or a relative path of several segments.
const PATH_SHAPE =
  /^(?:[/\\~.]|[A-Za-z]:[/\\]|file:)[^\s]{0,4095}$|^[\w.@+-]{1,255}(?:[/\\][^\s/\\]{0,255}){1,64}$/;

/** Whether `value` reads as a file path (absolute, home-relative or relative with a separator). */
export function isPathShaped(value: string): boolean {
  return value.length <= 4096 && PATH_SHAPE.test(value);
}

// Where credentials live: a tool that declared no roots still may not read them.
const SENSITIVE =
  /(?:^|\/)(?:\.ssh(?:\/|$)|\.gnupg(?:\/|$)|\.aws\/(?:credentials|config)$|\.kube\/config$|\.docker\/config\.json$|\.git-credentials$|\.netrc$|\.pgpass$|id_(?:rsa|dsa|ecdsa|ed25519)(?:\.pub)?$)|^\/etc\/(?:shadow|gshadow|sudoers|passwd|master\.passwd)$|^\/proc\/(?:self|\d{1,10}|thread-self)\/(?:environ|mem|maps|cmdline)$|^\/(?:var\/)?run\/secrets(?:\/|$)|^\/root(?:\/|$)|(?:^|\/)windows\/system32\/config\/(?:sam|system|security)$/i;

export type ValuePathProblem = 'nul' | 'traversal' | 'sensitive';

/**
 * What is wrong with a path-shaped value of a tool that declared no roots: a NUL, a relative path
 * that climbs two or more levels above where it starts (one level is an everyday sibling path), or a
 * file where credentials live. Read through percent-encoding (twice), NFKC and backslashes.
 */
export function valuePathProblem(value: string): ValuePathProblem | undefined {
  const forms = [value];
  let current = value;
  for (let i = 0; i < 2 && /%[0-9A-Fa-f]{2}/.test(current); i++) {
    try {
      current = decodeURIComponent(current);
    } catch {
      break;
    }
    forms.push(current);
  }
  for (const form of [...forms]) {
    const folded = form.normalize('NFKC');
    if (folded !== form) forms.push(folded);
  }
  for (const form of forms) {
    if (form.includes('\0')) return 'nul';
    let path = form.replace(/\\/g, '/').replace(/^file:\/\/(?:localhost)?/i, '');
    const home = path.startsWith('~');
    if (home) path = path.replace(/^~[^/]{0,64}/, '');
    const absolute = path.startsWith('/') || /^[A-Za-z]:\//.test(path);
    const segments: string[] = [];
    let above = 0;
    for (const raw of path.split('/')) {
      const segment = /^[. ]+$/.test(raw) ? (raw.split('.').length > 2 ? '..' : '.') : raw;
      if (segment === '' || segment === '.') continue;
      if (segment === '..') {
        if (segments.length > 0) segments.pop();
        else if (!absolute && !home) above++;
        continue;
      }
      segments.push(segment);
    }
    if (above >= 2) return 'traversal';
    const joined = `${absolute && !/^[A-Za-z]:/.test(path) ? '/' : ''}${segments.join('/')}`;
    if (SENSITIVE.test(joined) || (above > 0 && SENSITIVE.test(`/${segments.join('/')}`))) return 'sensitive';
  }
  return undefined;
}

// A shell line: a chaining operator, a pipe or a substitution followed by a command a payload reaches
// for, given a flag, a path, a file or host name, or a URL, or ending the line ("; rm -rf /", "| sh",
// "$(whoami)"); a command in backticks given a flag or path; a command line that redirects into a
// file. Prose with a semicolon ("milk; cat food") or inline code ("the `id` column") does not match.
const COMMANDS =
  'sh|bash|zsh|dash|ksh|echo|printf|tee|curl|wget|nc|ncat|netcat|socat|telnet|rm|chmod|chown|python[23]?|perl|ruby|php|node|powershell|pwsh|cmd|eval|exec|base64|dd|mkfifo|ssh|scp|rsync|crontab|sudo|su|cat|env|printenv|whoami|id|uname|nslookup|dig|ping';
const BIN = '(?:sudo\\s{1,8})?(?:/(?:usr/)?(?:local/)?s?bin/)?';
const OPERAND =
  '(?:\\s{1,8}(?:-{1,2}\\w|[/~$]|\\.{1,2}/|https?:|[\\w-]{0,64}[./][\\w./-]{1,128})|\\s{0,8}(?:[;|&)>]|$))';
const CHAINED = new RegExp(`(?:;|&&|\\|\\||\\||&|\\$\\()\\s{0,8}${BIN}(?:${COMMANDS})\\b${OPERAND}`);
const BACKTICK = new RegExp(
  `\`\\s{0,8}${BIN}(?:${COMMANDS})\\s{1,8}(?:-{1,2}\\w|[/~]|https?:)[^\`]{0,4096}\``,
);
const REDIRECT = new RegExp(
  `^\\s{0,8}${BIN}(?:${COMMANDS})\\s[^\\n]{0,4096}(?:>{1,2}\\s{0,8}[/~]|<\\s{0,8}/)`,
);

/** Whether a single-line `value` is shaped like a shell command line that runs or chains a command. */
export function isShellLine(value: string): boolean {
  if (value.length > 4096 || value.includes('\n')) return false;
  return CHAINED.test(value) || BACKTICK.test(value) || REDIRECT.test(value);
}
