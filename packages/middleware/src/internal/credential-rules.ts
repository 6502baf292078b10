// Credential shapes, in the spirit of gitleaks: each rule starts at a fixed literal (found with
// indexOf) and is confirmed by a sticky pattern whose repeats are bounded, or that skips past what it
// read when it fails, so a scan is linear in the text whatever the text is.

export interface CredentialRule {
  /** Stable id, shown in redactions (`[redacted: aws-access-key]`) and refusals. */
  readonly id: string;
  /** What the refusal calls it. */
  readonly label: string;
  /** Literals every match starts with. */
  readonly literals: readonly string[];
  /** Sticky; matched at a literal's position. */
  readonly pattern: RegExp;
  /** The character before a match must not be one of these (a word boundary). */
  readonly notAfter?: RegExp;
  /** For an unbounded pattern: the run to skip past when it fails at a position, so no text is read twice. */
  readonly skip?: RegExp;
}

const ALNUM = /[A-Za-z0-9]/;
const TOKEN = /[A-Za-z0-9_-]/;

export const CREDENTIAL_RULES: readonly CredentialRule[] = [
  {
    id: 'aws-access-key',
    label: 'an AWS access key id',
    literals: ['AKIA', 'ASIA', 'ABIA', 'ACCA', 'A3T'],
    pattern: /(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}(?![A-Za-z0-9])/y,
    notAfter: ALNUM,
  },
  {
    id: 'github-token',
    label: 'a GitHub token',
    literals: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'],
    pattern: /gh[pousr]_[A-Za-z0-9]{36}(?![A-Za-z0-9])/y,
    notAfter: ALNUM,
  },
  {
    id: 'github-fine-grained-token',
    label: 'a GitHub fine-grained token',
    literals: ['github_pat_'],
    pattern: /github_pat_[A-Za-z0-9_]{82}(?![A-Za-z0-9_])/y,
    notAfter: ALNUM,
  },
  {
    id: 'gitlab-token',
    label: 'a GitLab token',
    literals: ['glpat-', 'gldt-', 'glrt-', 'glptt-'],
    pattern: /gl(?:pat|dt|rt|ptt)-[A-Za-z0-9_-]{20}[A-Za-z0-9_.-]{0,280}/y,
    notAfter: ALNUM,
  },
  {
    id: 'slack-token',
    label: 'a Slack token',
    literals: ['xoxa-', 'xoxb-', 'xoxe-', 'xoxo-', 'xoxp-', 'xoxr-', 'xoxs-', 'xapp-'],
    pattern: /(?:xox[abeoprs]-[0-9A-Za-z-]{10,250}|xapp-[0-9]-[0-9A-Za-z-]{20,250})/y,
    notAfter: ALNUM,
  },
  {
    id: 'slack-webhook',
    label: 'a Slack webhook URL',
    literals: ['hooks.slack.com/'],
    pattern: /hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9+/_-]{20,200}/y,
  },
  {
    id: 'stripe-key',
    label: 'a Stripe secret key',
    literals: ['sk_live_', 'sk_test_', 'sk_prod_', 'rk_live_', 'rk_test_', 'rk_prod_'],
    pattern: /[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,247}/y,
    notAfter: ALNUM,
  },
  {
    id: 'google-api-key',
    label: 'a Google API key',
    literals: ['AIza'],
    pattern: /AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/y,
    notAfter: TOKEN,
  },
  {
    id: 'openai-key',
    label: 'an OpenAI API key',
    literals: ['sk-proj-', 'sk-svcacct-', 'sk-admin-', 'sk-'],
    pattern: /sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,300}|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20})/y,
    notAfter: TOKEN,
  },
  {
    id: 'anthropic-key',
    label: 'an Anthropic API key',
    literals: ['sk-ant-'],
    pattern: /sk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_-]{80,120}/y,
    notAfter: TOKEN,
  },
  {
    id: 'private-key',
    label: 'a private key',
    literals: ['-----BEGIN'],
    pattern: /-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----/y,
  },
  {
    id: 'jwt',
    label: 'a JSON Web Token',
    literals: ['eyJ'],
    pattern: /eyJ[A-Za-z0-9_-]{6,}\.eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]*/y,
    notAfter: TOKEN,
    skip: /[A-Za-z0-9_-]*/y,
  },
];

export interface CredentialFinding {
  readonly rule: CredentialRule;
  readonly start: number;
  readonly end: number;
}

const FOOTER = /-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----/g;
// A key's body when no footer follows: base64, whitespace and the escapes JSON writes for line breaks.
const KEY_BODY = /[A-Za-z0-9+/=\s\\]*/y;

/** Footers and quotes, each found once per scan, so headers read in order cost linear time together. */
interface KeyScan {
  footers: { at: number; end: number }[] | undefined;
  footer: number;
  quote: number;
}

/** Where a private key whose header ends at `headerEnd` ends: its footer, or the end of its body. */
function privateKeyEnd(text: string, headerEnd: number, scan: KeyScan): number {
  const footers = (scan.footers ??= [...text.matchAll(FOOTER)].map((m) => ({
    at: m.index,
    end: m.index + m[0].length,
  })));
  while (scan.footer < footers.length && footers[scan.footer]!.at < headerEnd) scan.footer++;
  if (scan.quote < headerEnd) {
    const quote = text.indexOf('"', headerEnd);
    scan.quote = quote === -1 ? Number.POSITIVE_INFINITY : quote;
  }
  const footer = footers[scan.footer];
  // A footer counts when only key material stands between: never across a quote into another value.
  if (footer !== undefined && footer.at < scan.quote) return footer.end;
  KEY_BODY.lastIndex = headerEnd;
  KEY_BODY.exec(text);
  return KEY_BODY.lastIndex;
}

// The same shapes in any case: a token upper-cased to slip past still reads as one.
const caseless = new WeakMap<CredentialRule, RegExp>();
function caselessPattern(rule: CredentialRule): RegExp {
  let pattern = caseless.get(rule);
  if (pattern === undefined) {
    pattern = new RegExp(rule.pattern.source, 'yi');
    caseless.set(rule, pattern);
  }
  return pattern;
}

const UPPER_ASCII = /[A-Z]/g;
// eslint-disable-next-line no-control-regex -- the class is everything outside ASCII
const NON_ASCII = /[^\u0000-\u007F]/;
// ASCII text lowers in place natively; other text letter by letter, so no position moves.
const lowerAscii = (text: string) =>
  NON_ASCII.test(text)
    ? text.replace(UPPER_ASCII, (c) => String.fromCharCode(c.charCodeAt(0) + 32))
    : text.toLowerCase();

const reversedLiterals = new WeakMap<readonly CredentialRule[], string[]>();

/** Whether `text` holds, in any case, a literal some rule starts with written backwards. */
export function mayHoldReversed(text: string, rules: readonly CredentialRule[] = CREDENTIAL_RULES): boolean {
  let backwards = reversedLiterals.get(rules);
  if (backwards === undefined) {
    backwards = rules.flatMap((rule) => rule.literals.map((l) => lowerAscii(l).split('').reverse().join('')));
    reversedLiterals.set(rules, backwards);
  }
  const lower = lowerAscii(text);
  return backwards.some((literal) => lower.includes(literal));
}

/**
 * Every credential-shaped value in `text`; with `first`, stops at the first; with `anyCase`, the
 * shapes match in upper or lower case too. Linear in `text`.
 */
export function findCredentials(
  text: string,
  rules: readonly CredentialRule[] = CREDENTIAL_RULES,
  first = false,
  anyCase = false,
): CredentialFinding[] {
  const found: CredentialFinding[] = [];
  const scan: KeyScan = { footers: undefined, footer: 0, quote: -1 };
  // ASCII-only lower case keeps every position where it was.
  const haystack = anyCase ? lowerAscii(text) : text;
  for (const rule of rules) {
    const pattern = anyCase ? caselessPattern(rule) : rule.pattern;
    for (const literal of anyCase ? rule.literals.map(lowerAscii) : rule.literals) {
      let from = 0;
      for (let at = haystack.indexOf(literal, from); at !== -1; at = haystack.indexOf(literal, from)) {
        if (rule.notAfter !== undefined && at > 0 && rule.notAfter.test(text[at - 1]!)) {
          from = at + 1;
          continue;
        }
        pattern.lastIndex = at;
        const match = pattern.exec(text);
        if (match === null) {
          if (rule.skip === undefined) from = at + 1;
          else {
            rule.skip.lastIndex = at;
            rule.skip.exec(text);
            from = Math.max(at + 1, rule.skip.lastIndex);
          }
          continue;
        }
        let end = at + match[0].length;
        if (rule.id === 'private-key') end = privateKeyEnd(text, end, scan);
        found.push({ rule, start: at, end });
        if (first) return found;
        from = end;
      }
    }
  }
  return found.sort((a, b) => a.start - b.start);
}

/** `text` with every credential-shaped value replaced by `[redacted: <rule id>]`; overlapping finds merge. */
export function redactCredentials(text: string, findings: readonly CredentialFinding[]): string {
  if (findings.length === 0) return text;
  let out = '';
  let at = 0;
  for (const finding of findings) {
    if (finding.end <= at) continue;
    if (finding.start >= at) {
      out += `${text.slice(at, finding.start)}[redacted: ${finding.rule.id}]`;
    }
    at = finding.end;
  }
  return out + text.slice(at);
}
