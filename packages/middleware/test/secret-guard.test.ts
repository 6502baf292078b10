import { createDispatcher, type CredentialProvider } from '@toolgate/core';
import { canonicalChain, secretGuard, SECRET_RULE_IDS, type SecretGuardOptions } from '@toolgate/middleware';
import { eventsOf, expectRefused, expectResult, KEY, recordEvents, recordingTool } from './fixtures';

// Shaped like the real thing, assembled here so no file holds one whole.
const fill = (alphabet: string, n: number) =>
  Array.from({ length: n }, (_, i) => alphabet[(i * 7) % alphabet.length]).join('');
const ALNUM = 'A1b2C3d4E5f6G7h8J9k0LmNpQrStUvWxYz';
export const SAMPLES: Record<string, string> = {
  'aws-access-key': `AKIA${fill('QWERTYUPASDFGHJKLZXCVBNM234567', 16)}`,
  'github-token': `ghp_${fill(ALNUM, 36)}`,
  'github-fine-grained-token': `github_pat_${fill(ALNUM, 22)}_${fill(ALNUM, 59)}`,
  'gitlab-token': `glpat-${fill(ALNUM, 20)}`,
  'slack-token': `xoxb-2462843942-${fill('0123456789', 13)}-${fill(ALNUM, 24)}`,
  'slack-webhook': `https://hooks.slack.com/services/T0${fill('ABCDEFGH', 8)}/B0${fill('ABCDEFGH', 8)}/${fill(ALNUM, 24)}`,
  'stripe-key': `sk_live_${fill(ALNUM, 24)}`,
  'google-api-key': `AIza${fill(ALNUM, 35)}`,
  'openai-key': `sk-proj-${fill(ALNUM, 48)}`,
  'anthropic-key': `sk-ant-api03-${fill(ALNUM, 93)}`,
  'private-key': `-----BEGIN RSA PRIVATE KEY-----\nMIIEow${fill(ALNUM, 60)}\n${fill(ALNUM, 64)}\n-----END RSA PRIVATE KEY-----`,
  jwt: `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.${fill(ALNUM, 43)}`,
};

const BENIGN: [string, string][] = [
  ['a SHA-1 commit id', 'commit 3f786850e387550fdab836ed7e6dc881de23001b fixes the parser'],
  ['a SHA-256 digest', 'sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'],
  ['a UUID', 'order 123e4567-e89b-12d3-a456-426614174000'],
  [
    'base64 of random bytes',
    'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk',
  ],
  ['base64 JSON without a signature', 'eyJ0aGVtZSI6ImRhcmsiLCJsYW5nIjoiZW4ifQ'],
  ['a Stripe publishable key', `pk_live_${fill(ALNUM, 24)}`],
  ['a certificate', '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----'],
  ['a public key', '-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----'],
  ['words that start like keys', 'AKIA is a prefix; task-list, ghp_short, sk-learn, xoxb-x, eyJ.'],
  ['a key embedded in a longer word', `XAKIA${fill('QWERTYUPASDFGHJKLZXCVBNM234567', 16)}`],
  ['an AWS key one character short', `AKIA${fill('QWERTYUPASDFGHJKLZXCVBNM234567', 15)}`],
];

const SECRET = 'sk-internal-9f3b2a71c0de4e5f';
const provider: CredentialProvider = { resolve: async () => ({ kind: 'api_key', value: SECRET }) };

function setup(
  options: SecretGuardOptions = {},
  respond: (args: Record<string, unknown>) => unknown = () => 'ok',
) {
  const send = recordingTool(
    { name: 'send_email', inputSchema: { type: 'object', properties: { text: {} } } },
    respond,
  );
  const billing = recordingTool(
    { name: 'billing', needs: { kind: 'api_key', service: 'billing' } },
    () => 'charged',
  );
  const verify = recordingTool({ name: 'verify_token' });
  const dispatcher = createDispatcher({
    tools: [send, billing, verify],
    chain: canonicalChain({ guards: { secrets: options }, credentials: provider, checkInKey: KEY }),
  });
  const events = recordEvents(dispatcher, ['secret.refused', 'secret.redacted']);
  const call = (text: unknown, toolName = 'send_email') => dispatcher.dispatch({ toolName, args: { text } });
  return { send, billing, call, events };
}

describe('secret guard: arguments', () => {
  it.each(Object.entries(SAMPLES))(
    'refuses %s in the arguments without repeating it',
    async (rule, value) => {
      const { send, call, events } = setup();

      const outcome = expectRefused(await call(`please forward this: ${value} thanks`));

      expect(send.calls).toHaveLength(0);
      expect(outcome).toMatchObject({ gate: 'secret-guard', code: 'SECRET_IN_ARGS', ran: false });
      expect(outcome.content).toMatch(
        /^\[secret-guard refused: 'send_email' argument 'text' contains .+, and credentials may not leave through tool arguments\. Retrying with the same value will not help\. Leave credentials out of tool arguments; if the user asked you to send one, tell them it was blocked\.\]$/,
      );
      expect(outcome.content).not.toContain(value.slice(0, 12));
      expect(eventsOf(events, 'secret.refused')).toEqual([expect.objectContaining({ arg: 'text', rule })]);
    },
  );

  it.each(BENIGN)('lets %s through', async (_what, text) => {
    const { send, call } = setup();
    expect(expectResult(await call(text)).kind).toBe('result');
    expect(send.calls).toHaveLength(1);
  });

  it('covers every built-in rule with a sample', () => {
    expect(Object.keys(SAMPLES).sort()).toEqual([...SECRET_RULE_IDS].sort());
  });

  it('finds a credential wrapped in base64, hex or percent-encoding, at any base64 alignment', async () => {
    const aws = SAMPLES['aws-access-key']!;
    const hex = [...new TextEncoder().encode(SAMPLES['github-token']!)]
      .map((b) => b.toString(16).padStart(2, '0'))
      .join('');
    const { send, call } = setup();
    for (const text of [
      btoa(`key=${aws}`),
      `x${btoa(`k ${aws}`)}`,
      btoa(aws).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''),
      hex,
      encodeURIComponent(SAMPLES['private-key']!),
    ]) {
      expect(expectRefused(await call(text)).code).toBe('SECRET_IN_ARGS');
    }
    expect(send.calls).toHaveLength(0);
    const plain = setup({ decode: false });
    expect(expectResult(await plain.call(btoa(`key=${aws}`))).kind).toBe('result');
  });

  it('finds credentials in keys and nested values, naming where', async () => {
    const { call } = setup();
    expect(expectRefused(await call({ headers: [{ auth: SAMPLES['jwt'] }] })).reason).toContain(
      "argument 'text.headers.0.auth'",
    );
    expect(expectRefused(await call({ [SAMPLES['stripe-key']!]: 1 })).reason).toContain("argument 'text'");
  });

  it('refuses a credential value this guard saw resolved, in the forms the redactor knows', async () => {
    const { send, billing, call } = setup();
    expect(expectResult(await call(SECRET)).kind).toBe('result');
    expect(expectResult(await call('-', 'billing')).kind).toBe('result');
    expect(billing.calls).toHaveLength(1);

    const raw = expectRefused(await call(`key: ${SECRET}`));
    const nested = expectRefused(await call(JSON.stringify({ config: { key: SECRET } })));
    const urlEncoded = expectRefused(await call(`https://example.com/?k=${encodeURIComponent(SECRET)}`));

    expect(raw.reason).toContain('contains a credential value this deployment holds');
    expect([nested.code, urlEncoded.code]).toEqual(['SECRET_IN_ARGS', 'SECRET_IN_ARGS']);
    expect(raw.content).not.toContain(SECRET);
    expect(send.calls).toHaveLength(1);
  });

  it('refuses a resolved value in every encoding it reads: escaped, URL-, base64- and hex-encoded', async () => {
    const { call, send } = setup();
    await call('-', 'billing');
    const bytes = new TextEncoder().encode(SECRET);
    const encodings = [
      SECRET,
      encodeURIComponent(SECRET),
      JSON.stringify(JSON.stringify(SECRET)),
      btoa(SECRET),
      btoa(SECRET).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''),
      [...bytes].map((b) => b.toString(16).padStart(2, '0')).join(''),
      [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join(''),
    ];
    for (const text of encodings) {
      const refused = expectRefused(await call(`x ${text} y`));
      expect(refused.code).toBe('SECRET_IN_ARGS');
      expect(refused.reason).toContain('a credential value this deployment holds');
    }
    expect(send.calls).toHaveLength(0);
  });

  it('refuses the values it is given, and refuses short ones at build', async () => {
    const { call } = setup({ values: ['correct-horse-battery'] });
    expect(expectRefused(await call('pw is correct-horse-battery')).code).toBe('SECRET_IN_ARGS');
    expect(() => secretGuard({ values: ['short'] })).toThrow(/at least 8 characters/);
  });

  it('keeps the values it was built with: changing the array afterwards neither adds nor drops one', async () => {
    const values = ['correct-horse-battery'];
    const { call } = setup({ values });
    values.splice(0, 1, 'another-secret-value');
    expect(expectRefused(await call('pw is correct-horse-battery')).code).toBe('SECRET_IN_ARGS');
    expectResult(await call('pw is another-secret-value'));
  });

  it('refuses a given value however short the argument that carries it: percent-encoded, reversed, at the run lengths', async () => {
    const secret = 'hunter2!x';
    const { call, send } = setup({ values: [secret] });
    const base64 = btoa(`${secret}${secret}`); // 24 characters: the shortest run read as base64
    const hex = [...`${secret}1234567`].map((c) => c.charCodeAt(0).toString(16).padStart(2, '0')).join('');
    for (const text of [
      encodeURIComponent(secret).replace(/x/g, '%78'), // 11 characters, percent-encoded
      [...secret].reverse().join(''),
      `\u{1F600}${[...secret].reverse().join('')}`, // a surrogate pair beside it
      base64,
      hex,
    ]) {
      const refused = expectRefused(await call(text));
      expect(refused.code).toBe('SECRET_IN_ARGS');
    }
    expect(send.calls).toHaveLength(0);
    expect((await call('hello')).kind).toBe('result');
    expect(send.calls).toHaveLength(1);
  });

  it('leaves out the rules it is told to, everywhere or for one tool', async () => {
    const everywhere = setup({ except: ['jwt'] });
    const forOne = setup({ exceptFor: { verify_token: ['jwt'] } });
    expect(expectResult(await everywhere.call(SAMPLES['jwt'])).kind).toBe('result');
    expect(expectResult(await forOne.call(SAMPLES['jwt'], 'verify_token')).kind).toBe('result');
    expect(expectRefused(await forOne.call(SAMPLES['jwt'])).code).toBe('SECRET_IN_ARGS');
    expect(() => secretGuard({ except: ['jwts'] })).toThrow("secretGuard: there is no rule 'jwts'");
  });

  it('stands before check-in: nobody is asked to approve sending a key', async () => {
    const tool = recordingTool({ name: 'post', checkIn: 'always' });
    const dispatcher = createDispatcher({
      tools: [tool],
      chain: canonicalChain({ guards: { secrets: {} }, checkInKey: KEY }),
    });
    const outcome = expectRefused(
      await dispatcher.dispatch({ toolName: 'post', args: { text: SAMPLES['github-token'] } }),
    );
    expect(outcome.gate).toBe('secret-guard');
  });
});

describe('secret guard: results', () => {
  it('redacts credential-shaped values from a text result before the model reads it', async () => {
    const aws = SAMPLES['aws-access-key']!;
    const { call, events } = setup({}, () => `id=${aws}\n${SAMPLES['private-key']}\nend`);

    const outcome = expectResult(await call('show config'));

    expect(outcome.content).toBe('id=[redacted: aws-access-key]\n[redacted: private-key]\nend');
    expect(outcome.value).toBe(outcome.content);
    expect(outcome.ledger.find((row) => row.gate === 'secret-guard' && row.outcome === 'transform')).toEqual({
      gate: 'secret-guard',
      outcome: 'transform',
      why: 'redacted aws-access-key, private-key',
      changed: true,
    });
    expect(eventsOf(events, 'secret.redacted')).toEqual([
      expect.objectContaining({ rules: ['aws-access-key', 'private-key'], count: 2 }),
    ]);
  });

  it('redacts inside structured results, in the value and in what the model reads', async () => {
    const token = SAMPLES['github-token']!;
    const { call } = setup({}, () => ({ repo: 'x', env: [{ name: 'GH', value: token }], [token]: true }));

    const outcome = expectResult(await call('env'));

    expect(outcome.content).not.toContain(token);
    expect(outcome.value).toEqual({
      repo: 'x',
      env: [{ name: 'GH', value: '[redacted: github-token]' }],
      '[redacted: github-token]': true,
    });
  });

  it('redacts a resolved credential that another tool echoes', async () => {
    const { call } = setup({}, () => `the billing key is ${SECRET}`);
    await call('-', 'billing');
    expect(expectResult(await call('echo')).content).toBe('the billing key is [redacted]');
  });

  it('leaves a result with nothing credential-shaped as it is, with no transform row', async () => {
    const value = { commit: '3f786850e387550fdab836ed7e6dc881de23001b', note: 'pk_live_abc' };
    const { call } = setup({}, () => value);
    const outcome = expectResult(await call('log'));
    expect(outcome.value).toBe(value);
    expect(outcome.ledger.filter((row) => row.gate === 'secret-guard')).toEqual([
      { gate: 'secret-guard', outcome: 'allow', why: 'no credential in the arguments', changed: false },
    ]);
  });

  it('does nothing to results when told not to', async () => {
    const aws = SAMPLES['aws-access-key']!;
    const { call } = setup({ results: false }, () => aws);
    expect(expectResult(await call('x')).content).toBe(aws);
    expect(() => secretGuard({ args: false, results: false })).toThrow(/nothing to guard/);
  });
});

describe('secret guard: a credential disguised in the arguments', () => {
  const token = SAMPLES['github-token']!;
  const aws = SAMPLES['aws-access-key']!;
  const b64 = (text: string) => btoa(text);
  const DISGUISES: [string, unknown][] = [
    ['spaced out', [...token].join(' ')],
    ['reversed', [...token].reverse().join('')],
    ['upper-cased', token.toUpperCase()],
    ['lower-cased', aws.toLowerCase()],
    ['with a zero-width space inside', `${token.slice(0, 10)}\u200B${token.slice(10)}`],
    ['with a soft hyphen entity inside', `${token.slice(0, 10)}&shy;${token.slice(10)}`],
    ['split over two arguments', [token.slice(0, 18), token.slice(18)]],
    ['split over two fields', { a: token.slice(0, 20), b: token.slice(20) }],
    ['base64 twice', b64(b64(token))],
    ['wrapped base64', b64(`config:\n  token: ${token}\n  region: eu-west-1\n`).replace(/(.{16})/g, '$1\n')],
    ['in Cyrillic look-alikes', token.replace(/a/g, '\u0430').replace(/e/g, '\u0435')],
  ];

  it.each(DISGUISES)('refuses a token %s', async (_how, text) => {
    const { send, call, events } = setup();
    const outcome = expectRefused(await call(text));
    expect(send.calls).toHaveLength(0);
    expect(outcome).toMatchObject({ gate: 'secret-guard', code: 'SECRET_IN_ARGS' });
    expect(outcome.content).not.toContain(token.slice(4, 16));
    expect(eventsOf(events, 'secret.refused')).toHaveLength(1);
  });

  it('lets ordinary text split over arguments through', async () => {
    const { send, call } = setup();
    for (const text of [
      ['ghp_', 'is how a GitHub token starts'],
      { subject: 'Release notes', body: 'AKIA is the prefix of an access key id; do not paste one here.' },
      'The quick brown fox jumps over the lazy dog. '.repeat(20),
      'a b c d e f g h i j k l m n o p q r s t u v w x y z',
    ])
      expect(expectResult(await call(text)).kind).toBe('result');
    expect(send.calls).toHaveLength(4);
  });
});

describe('secret guard: an MCP result is redacted in place, not withheld', () => {
  const token = SAMPLES['github-token']!;
  const aws = SAMPLES['aws-access-key']!;

  function imported(result: unknown) {
    const tool = { ...recordingTool({ name: 'read_file' }, () => result), source: 'files' };
    const dispatcher = createDispatcher({
      tools: [tool],
      chain: canonicalChain({ guards: { secrets: {} }, checkInKey: KEY }),
    });
    const events = recordEvents(dispatcher, ['secret.redacted', 'secret.withheld']);
    return { call: () => dispatcher.dispatch({ toolName: 'read_file', args: { path: '.env' } }), events };
  }

  it('redacts a credential in a text block and keeps the rest of the result', async () => {
    const { call, events } = imported({
      content: [
        { type: 'text', text: `# settings\nGITHUB_TOKEN=${token}\nREGION=eu-west-1` },
        { type: 'text', text: 'second block' },
        { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
      ],
    });
    const outcome = expectResult(await call());
    expect(outcome.content).toMatch(
      /^# settings\nGITHUB_TOKEN=\[redacted: github-token\]\nREGION=eu-west-1\nsecond block\n/,
    );
    expect(outcome.content).toContain('REGION=eu-west-1');
    expect(outcome.content).not.toContain(token);
    expect(outcome.value).toMatchObject({
      content: [
        { type: 'text', text: '# settings\nGITHUB_TOKEN=[redacted: github-token]\nREGION=eu-west-1' },
        { type: 'text', text: 'second block' },
        { type: 'image', data: 'iVBORw0KGgo=' },
      ],
    });
    expect(eventsOf(events, 'secret.withheld')).toHaveLength(0);
  });

  it('redacts structuredContent, a resource and JSON inside a text block', async () => {
    const { call } = imported({
      content: [
        { type: 'text', text: JSON.stringify({ env: { AWS_ACCESS_KEY_ID: aws, REGION: 'eu-west-1' } }) },
        { type: 'resource', resource: { uri: 'file:///app/.env', text: `TOKEN=${token}` } },
      ],
      structuredContent: { env: { key: aws, region: 'eu-west-1' } },
    });
    const outcome = expectResult(await call());
    const json = JSON.stringify(outcome.value);
    expect(json).not.toContain(aws);
    expect(json).not.toContain(token);
    expect(outcome.value).toMatchObject({
      content: [
        {
          text: JSON.stringify({
            env: { AWS_ACCESS_KEY_ID: '[redacted: aws-access-key]', REGION: 'eu-west-1' },
          }),
        },
        { resource: { uri: 'file:///app/.env', text: 'TOKEN=[redacted: github-token]' } },
      ],
      structuredContent: { env: { key: '[redacted: aws-access-key]', region: 'eu-west-1' } },
    });
  });

  it('redacts a credential only structuredContent holds', async () => {
    const { call } = imported({
      content: [{ type: 'text', text: 'see the structured part' }],
      structuredContent: { token },
    });
    const outcome = expectResult(await call());
    expect(JSON.stringify(outcome.value)).not.toContain(token);
  });

  it.each([
    ['upper-cased', token.toUpperCase()],
    ['reversed', [...token].reverse().join('')],
  ])('redacts a credential %s', async (_how, shape) => {
    const { call } = imported({ content: [{ type: 'text', text: `value: ${shape} (end)` }] });
    const outcome = expectResult(await call());
    expect(outcome.content).toBe('value: [redacted: github-token] (end)');
  });
});

describe('secret guard: a credential split across fields of a result', () => {
  const token = SAMPLES['github-token']!;

  it('redacts each part, and leaves the other fields as they were', async () => {
    const { call, events } = setup({}, () => ({
      region: 'eu-west-1',
      token_a: token.slice(0, 20),
      token_b: token.slice(20),
      note: 'rotate monthly',
    }));
    const outcome = expectResult(await call('show'));
    expect(outcome.value).toEqual({
      region: 'eu-west-1',
      token_a: '[redacted: github-token]',
      token_b: '[redacted]',
      note: 'rotate monthly',
    });
    expect(eventsOf(events, 'secret.redacted')).toEqual([
      expect.objectContaining({ rules: ['github-token'], count: 1 }),
    ]);
  });

  it('leaves fields that only start like a credential', async () => {
    const value = { prefix: 'ghp_', rest: 'is how a GitHub token starts', list: ['AKIA', 'QWERTY'] };
    const { call } = setup({}, () => value);
    expect(expectResult(await call('show')).value).toBe(value);
  });
});
