import { createDispatcher, DispatcherConfigError, ToolDefinitionError, type Identity } from '@toolgate/core';
import { canonicalChain, egressGuard, type EgressGuardOptions } from '@toolgate/middleware';
import {
  eventsOf,
  expectRefused,
  expectResult,
  KEY,
  never,
  recordEvents,
  recordingTool,
  type RecordingToolSpec,
} from './fixtures';

const URL_SCHEMA = { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] };

function setup(options: EgressGuardOptions = {}, spec: RecordingToolSpec = { egress: ['url'] }) {
  const tool = recordingTool({ name: 'fetch_page', inputSchema: URL_SCHEMA, ...spec });
  const dispatcher = createDispatcher({
    tools: [tool],
    chain: canonicalChain({ guards: { egress: options }, checkInKey: KEY }),
  });
  const events = recordEvents(dispatcher, ['egress.refused', 'egress.resolve-failed']);
  const call = (args: Record<string, unknown>, identity?: Identity) =>
    dispatcher.dispatch({ toolName: 'fetch_page', args }, identity === undefined ? {} : { identity });
  return { tool, call, events };
}

const PRIVATE: [string, string][] = [
  ['http://127.0.0.1/admin', 'loopback'],
  ['http://2130706433/', 'loopback (decimal)'],
  ['http://0x7f000001/', 'loopback (hex)'],
  ['http://0177.0.0.1/', 'loopback (octal)'],
  ['http://0x7f.1/', 'loopback (mixed short hex)'],
  ['http://127.1/', 'loopback (short)'],
  ['http://%31%32%37.0.0.1/', 'loopback (percent-encoded host)'],
  ['http://169.254.169.254/latest/meta-data/iam/', 'cloud metadata'],
  ['http://0251.0376.0251.0376/', 'cloud metadata (octal)'],
  ['http://0.0.0.0:8080/', 'unspecified'],
  ['http://0/', 'unspecified (zero)'],
  ['http://10.1.2.3/', 'private 10/8'],
  ['http://172.20.0.5/', 'private 172.16/12'],
  ['http://192.168.1.1/', 'private 192.168/16'],
  ['http://100.64.0.1/', 'shared address space'],
  ['http://[::1]/', 'IPv6 loopback'],
  ['http://[::]/', 'IPv6 unspecified'],
  ['http://[fe80::1]/', 'IPv6 link-local'],
  ['http://[fd00:ec2::254]/', 'IPv6 unique-local (AWS metadata)'],
  ['http://[fc00::1]/', 'IPv6 unique-local'],
  ['http://[::ffff:127.0.0.1]/', 'IPv4-mapped loopback'],
  ['http://[::ffff:a9fe:a9fe]/', 'IPv4-mapped metadata'],
  ['http://[::127.0.0.1]/', 'IPv4-compatible loopback'],
  ['http://[::ffff:0:a00:1]/', 'IPv4-translated private'],
  ['http://[64:ff9b::a9fe:a9fe]/', 'NAT64 metadata'],
  ['http://[2002:7f00:1::]/', '6to4 loopback'],
  ['http://localhost:3000/', 'localhost'],
  ['http://LOCALHOST./', 'localhost with a trailing dot'],
  ['http://api.localhost/', 'a localhost subdomain'],
  ['http://metadata.google.internal/computeMetadata/v1/', 'GCP metadata name'],
  ['http://printer.local/', 'mDNS name'],
  ['http://intranet/', 'a single-label name'],
  ['//169.254.169.254/latest', 'a scheme-relative URL'],
  ['localhost:6379', 'a host and port without a scheme'],
  ['169.254.169.254/latest/meta-data', 'a host and path without a scheme'],
  ['http://127.0.0.1\t/', 'a tab the URL parser drops'],
];

const KINDS = [
  'a loopback address (this machine)',
  'a link-local address (where cloud metadata services answer)',
  'a private network address',
  'the unspecified address (all zeros), which means this machine',
  'a reserved address that is not on the public internet',
  'a name that only resolves inside a local network',
];

const refusalFor = (kind: string) =>
  `[egress-guard refused: 'fetch_page' argument 'url' points to ${kind}, which tools may not reach. ` +
  'Retrying with the same destination will not help. Use a public address.]';

describe('egress guard', () => {
  it.each(PRIVATE)('refuses %s (%s) before the tool runs, without repeating the address', async (url) => {
    const { tool, call, events } = setup();

    const outcome = expectRefused(await call({ url }));

    expect(tool.calls).toHaveLength(0);
    expect(outcome).toMatchObject({ gate: 'egress-guard', code: 'EGRESS_PRIVATE_ADDRESS', ran: false });
    // One of six fixed sentences: the address itself is never repeated.
    expect(KINDS.map((kind) => refusalFor(kind))).toContain(outcome.content);
    expect(eventsOf(events, 'egress.refused')).toEqual([
      expect.objectContaining({ arg: 'url', code: 'EGRESS_PRIVATE_ADDRESS', gate: 'egress-guard' }),
    ]);
  });

  it('names cloud metadata when the address is link-local', async () => {
    const { call } = setup();
    const outcome = expectRefused(await call({ url: 'http://169.254.169.254/' }));
    expect(outcome.reason).toContain('a link-local address (where cloud metadata services answer)');
  });

  it.each([
    ['https://en.wikipedia.org/wiki/Server-side_request_forgery'],
    ['https://1.1.1.1/dns-query'],
    ['http://[2606:4700:4700::1111]/'],
    ['https://example.com/redirect?next=http://127.0.0.1/admin'],
    ['https://localhost.example.com/'],
    ['https://docs.internal-tools.example.com/'],
    ['https://172.217.16.142/'],
    ['example.com/path'],
    ['https://xn--bcher-kva.example/'],
  ])('lets a public destination through: %s', async (url) => {
    const { tool, call } = setup();

    const outcome = expectResult(await call({ url }));

    expect(tool.calls).toHaveLength(1);
    expect(outcome.ledger.find((row) => row.gate === 'egress-guard')).toEqual({
      gate: 'egress-guard',
      outcome: 'allow',
      why: '1 destination allowed',
      changed: false,
    });
  });

  it.each([
    ['file:///etc/passwd'],
    ['gopher://127.0.0.1:6379/_FLUSHALL'],
    ['dict://example.com:11211/stat'],
    ['javascript:alert(1)'],
    ['data:text/html,<script>1</script>'],
  ])('refuses a scheme other than http and https: %s', async (url) => {
    const { tool, call } = setup();
    const outcome = expectRefused(await call({ url }));
    expect(tool.calls).toHaveLength(0);
    expect(outcome.code).toBe('EGRESS_SCHEME');
    expect(outcome.reason).toContain('Use an http or https URL');
  });

  it('takes the schemes it is given', async () => {
    const { call } = setup({ schemes: ['https', 'ftp'] });
    expect(expectResult(await call({ url: 'ftp://ftp.example.com/pub' })).kind).toBe('result');
    expect(expectRefused(await call({ url: 'http://example.com/' })).code).toBe('EGRESS_SCHEME');
  });

  it('refuses a URL that carries a user name or password, the classic host confusion included', async () => {
    const { call } = setup();
    expect(expectRefused(await call({ url: 'https://user:hunter22@example.com/' })).code).toBe(
      'EGRESS_CREDENTIALS',
    );
    const confusion = expectRefused(await call({ url: 'http://example.com@127.0.0.1/' }));
    expect(confusion.code).toBe('EGRESS_CREDENTIALS');
    expect(confusion.content).not.toContain('hunter22');
  });

  it('refuses what the URL parser cannot read, and values that are not strings', async () => {
    const { tool, call } = setup();
    expect(expectRefused(await call({ url: 'http://[::1' })).code).toBe('EGRESS_NOT_A_URL');
    const tool2 = setup(
      {},
      { egress: ['target'], inputSchema: { type: 'object', properties: { target: {} } } },
    );
    expect(expectRefused(await tool2.call({ target: { host: '127.0.0.1' } })).code).toBe('EGRESS_NOT_A_URL');
    // A number is a host a tool could interpolate: 2130706433 is 127.0.0.1.
    expect(expectRefused(await tool2.call({ target: 2130706433 })).code).toBe('EGRESS_PRIVATE_ADDRESS');
    expect(tool.calls).toHaveLength(0);
  });

  it('judges every item of an array and nested paths, naming the item that failed', async () => {
    const schema = {
      type: 'object',
      properties: {
        hooks: { type: 'array', items: { type: 'object', properties: { url: { type: 'string' } } } },
      },
    };
    const { tool, call } = setup({}, { egress: ['hooks.*.url'], inputSchema: schema });

    const outcome = expectRefused(
      await call({ hooks: [{ url: 'https://example.com/a' }, { url: 'http://[::ffff:10.0.0.1]/' }] }),
    );

    expect(outcome.reason).toContain("argument 'hooks.1.url'");
    expect(tool.calls).toHaveLength(0);
    expect(expectResult(await call({ hooks: [{ url: 'https://example.com/a' }, {}] })).kind).toBe('result');
  });

  describe('arguments found by their schema format', () => {
    const schema = {
      type: 'object',
      properties: {
        endpoint: { type: 'string', format: 'uri' },
        mirrors: { type: 'array', items: { type: 'string', format: 'hostname' } },
        link: { type: 'string', format: 'uri-reference' },
        note: { type: 'string' },
      },
    };

    it('judges uri and hostname formats without a declaration, nested and in arrays', async () => {
      const { tool, call } = setup({}, { inputSchema: schema });
      expect(expectRefused(await call({ endpoint: 'http://10.0.0.8/' })).reason).toContain("'endpoint'");
      expect(expectRefused(await call({ mirrors: ['example.com', '127.1'] })).reason).toContain(
        "'mirrors.1'",
      );
      expect(expectRefused(await call({ link: '//10.0.0.8/x' })).reason).toContain("'link'");
      expect(tool.calls).toHaveLength(0);
    });

    it('lets relative references and unformatted text through', async () => {
      const { tool, call } = setup({}, { inputSchema: schema });
      const outcome = await call({ link: '/docs/page.html', note: 'see http://127.0.0.1 in the logs' });
      expect(expectResult(outcome).kind).toBe('result');
      expect(tool.calls).toHaveLength(1);
    });

    it('leaves them alone when the tool declares egress: [] or detection is off, and values are not read', async () => {
      const optedOut = setup({ values: false }, { inputSchema: schema, egress: [] });
      const off = setup({ detectFormats: false, values: false }, { inputSchema: schema });
      expect(expectResult(await optedOut.call({ endpoint: 'http://10.0.0.8/' })).kind).toBe('result');
      expect(expectResult(await off.call({ endpoint: 'http://10.0.0.8/' })).kind).toBe('result');
    });

    it('still judges a URL-shaped value when the tool declares egress: [] (declarations refine, they do not enable)', async () => {
      const optedOut = setup({}, { inputSchema: schema, egress: [] });
      expect(expectRefused(await optedOut.call({ endpoint: 'http://10.0.0.8/' })).code).toBe(
        'EGRESS_PRIVATE_ADDRESS',
      );
    });
  });

  describe('allow-lists', () => {
    const options: EgressGuardOptions = {
      allowHosts: ['*.wikipedia.org', 'api.github.com'],
      tenants: { acme: { allowHosts: ['api.acme.example', 'bücher.example'] } },
    };

    it('lets listed hosts and subdomains through and refuses the rest, listing what is allowed', async () => {
      const { tool, call } = setup(options);
      expect(expectResult(await call({ url: 'https://en.wikipedia.org/wiki/A' })).kind).toBe('result');
      expect(expectResult(await call({ url: 'https://API.GITHUB.COM/repos' })).kind).toBe('result');
      const apex = expectRefused(await call({ url: 'https://wikipedia.org/' }));
      const lookalike = expectRefused(await call({ url: 'https://api.github.com.evil.example/' }));
      expect(apex.code).toBe('EGRESS_HOST_NOT_ALLOWED');
      expect(lookalike.content).toBe(
        "[egress-guard refused: 'fetch_page' argument 'url' names a host outside this deployment's allow-list. " +
          'Retrying with the same destination will not help. Use an allowed host: *.wikipedia.org, api.github.com.]',
      );
      expect(tool.calls).toHaveLength(2);
    });

    it("applies a tenant's own list instead, IDN hosts compared in their ASCII form", async () => {
      const { call } = setup(options);
      const acme: Identity = { tenant: 'acme', principal: 'ann' };
      expect(expectResult(await call({ url: 'https://api.acme.example/v1' }, acme)).kind).toBe('result');
      expect(expectResult(await call({ url: 'https://xn--bcher-kva.example/' }, acme)).kind).toBe('result');
      expect(expectRefused(await call({ url: 'https://en.wikipedia.org/' }, acme)).code).toBe(
        'EGRESS_HOST_NOT_ALLOWED',
      );
      expect(expectRefused(await call({ url: 'https://api.acme.example/' }, { tenant: 'globex' })).code).toBe(
        'EGRESS_HOST_NOT_ALLOWED',
      );
    });

    it('never lets a listed private address through', async () => {
      const { call } = setup({ allowHosts: ['127.0.0.1', 'localhost'] });
      expect(expectRefused(await call({ url: 'http://127.0.0.1/' })).code).toBe('EGRESS_PRIVATE_ADDRESS');
      expect(expectRefused(await call({ url: 'http://localhost/' })).code).toBe('EGRESS_PRIVATE_ADDRESS');
    });

    it('refuses an entry that is not a host name when the guard is built', () => {
      expect(() => egressGuard({ allowHosts: ['https://example.com/'] })).toThrow(
        /allowHosts has "https:\/\/example.com\/", which is not a host name/,
      );
      expect(() => egressGuard({ tenants: { acme: { allowHosts: ['a b'] } } })).toThrow(
        /tenants\.acme\.allowHosts/,
      );
    });
  });

  describe('name resolution', () => {
    const resolver = (answers: Record<string, readonly string[]>) => {
      const asked: string[] = [];
      const resolve = async (hostname: string) => {
        asked.push(hostname);
        const found = answers[hostname];
        if (found === undefined) throw new Error(`ENOTFOUND ${hostname}`);
        return found;
      };
      return { asked, resolve };
    };

    it('refuses a name that resolves to a private address, and passes the checked addresses to the tool', async () => {
      const { asked, resolve } = resolver({
        'rebind.example': ['93.184.216.34', '10.0.0.7'],
        '127.0.0.1.nip.io': ['127.0.0.1'],
        'example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
      });
      const { tool, call } = setup({ resolve });

      const rebind = expectRefused(await call({ url: 'http://rebind.example/' }));
      const nip = expectRefused(await call({ url: 'http://127.0.0.1.nip.io/' }));
      const fine = expectResult(await call({ url: 'https://example.com./x' }));

      expect(rebind.reason).toContain('resolves to a private network address');
      expect(nip.code).toBe('EGRESS_PRIVATE_ADDRESS');
      expect(fine.kind).toBe('result');
      expect(asked).toEqual(['rebind.example', '127.0.0.1.nip.io', 'example.com']);
      expect(tool.calls).toHaveLength(1);
      expect(tool.calls[0]!.ctx.state.egress).toEqual({
        url: { host: 'example.com.', addresses: ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'] },
      });
    });

    it('does not resolve address literals', async () => {
      const { asked, resolve } = resolver({});
      const { call } = setup({ resolve });
      expect(expectResult(await call({ url: 'https://1.1.1.1/' })).kind).toBe('result');
      expect(asked).toEqual([]);
    });

    it('fails closed, retryably, when the resolver throws, hangs or answers nonsense', async () => {
      const throwing = setup({ resolve: () => Promise.reject(new Error('SERVFAIL secret-detail')) });
      const hanging = setup({ resolve: () => never(), deadlineMs: 20 });
      const nonsense = setup({ resolve: async () => ['not an address'] });
      const empty = setup({ resolve: async () => [] });

      const threw = expectRefused(await throwing.call({ url: 'https://example.com/' }));
      const hung = expectRefused(await hanging.call({ url: 'https://example.com/' }));
      const odd = expectRefused(await nonsense.call({ url: 'https://example.com/' }));
      const none = expectRefused(await empty.call({ url: 'https://example.com/' }));

      expect(threw).toMatchObject({ code: 'EGRESS_RESOLVE_FAILED', retryable: true });
      expect(threw.content).not.toContain('secret-detail');
      expect(hung.code).toBe('EGRESS_RESOLVE_FAILED');
      expect(eventsOf(hanging.events, 'egress.resolve-failed')).toEqual([
        expect.objectContaining({ failure: 'timeout' }),
      ]);
      expect(odd.code).toBe('EGRESS_PRIVATE_ADDRESS');
      expect(none.code).toBe('EGRESS_RESOLVE_FAILED');
      for (const { tool } of [throwing, hanging, nonsense, empty]) expect(tool.calls).toHaveLength(0);
    });
  });

  it('stands before check-in: nobody is asked about a call it refuses', async () => {
    const { call, tool } = setup({}, { egress: ['url'], checkIn: 'always' });

    const refused = expectRefused(await call({ url: 'http://169.254.169.254/' }));
    const asked = await call({ url: 'https://example.com/' });

    expect(refused.gate).toBe('egress-guard');
    expect(refused.ledger.map((row) => row.gate)).not.toContain('check-in');
    expect(asked.kind).toBe('paused');
    expect(tool.calls).toHaveLength(0);
  });

  it('is planned out of tools with no URL or host arguments when values are not read, filing the same pass', async () => {
    const { call, tool } = setup(
      { values: false },
      { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
    );

    const outcome = expectResult(await call({ text: 'http://127.0.0.1/' }));

    expect(tool.calls).toHaveLength(1);
    expect(outcome.ledger.find((row) => row.gate === 'egress-guard')).toEqual({
      gate: 'egress-guard',
      outcome: 'allow',
      why: 'no URL or host arguments',
      changed: false,
    });
  });

  it('makes a dispatcher refuse a tool that declares egress when no middleware enforces it', () => {
    const tool = recordingTool({ name: 'fetch_page', inputSchema: URL_SCHEMA, egress: ['url'] });
    expect(() => createDispatcher({ tools: [tool], chain: canonicalChain() })).toThrow(DispatcherConfigError);
    expect(() => createDispatcher({ tools: [tool], chain: canonicalChain() })).toThrow(
      "tool 'fetch_page' declares 'egress', but no middleware in the chain enforces it; add the egress guard",
    );
    expect(() =>
      createDispatcher({ tools: [tool], chain: canonicalChain({ guards: { egress: false } }) }),
    ).toThrow(DispatcherConfigError);
    expect(() =>
      createDispatcher({ tools: [tool], chain: canonicalChain().insertBefore('check-in', egressGuard()) }),
    ).not.toThrow();
  });

  it('refuses an egress declaration that names no argument of the schema, at definition', () => {
    expect(() => recordingTool({ name: 'fetch_page', inputSchema: URL_SCHEMA, egress: ['target'] })).toThrow(
      ToolDefinitionError,
    );
    expect(() => recordingTool({ name: 'fetch_page', inputSchema: URL_SCHEMA, egress: ['target'] })).toThrow(
      "tool 'fetch_page': 'egress' names 'target', which is absent from the input schema. Add 'target' as a property.",
    );
    expect(() =>
      recordingTool({ name: 'fetch_page', inputSchema: URL_SCHEMA, egress: 'url' as never }),
    ).toThrow(/'egress' must list the arguments/);
    expect(() => recordingTool({ name: 'fetch_page', inputSchema: URL_SCHEMA, egress: ['url..x'] })).toThrow(
      /argument paths/,
    );
  });
});

describe('egress guard: values first', () => {
  const PLAIN = { inputSchema: { type: 'object', properties: {} } };

  it.each([
    ['cloud metadata', { target: 'http://169.254.169.254/latest/meta-data/' }, 'EGRESS_PRIVATE_ADDRESS'],
    ['loopback in hex', { target: 'http://0x7f000001:6379/' }, 'EGRESS_PRIVATE_ADDRESS'],
    [
      'a nested list item',
      { hooks: [{ to: 'https://example.com/' }, { to: 'http://10.1.2.3/' }] },
      'EGRESS_PRIVATE_ADDRESS',
    ],
    ['a bare metadata address', { host: '169.254.169.254' }, 'EGRESS_PRIVATE_ADDRESS'],
    ['localhost with a port', { server: 'localhost:6379' }, 'EGRESS_PRIVATE_ADDRESS'],
    ['a gopher URL', { target: 'gopher://example.com:70/1' }, 'EGRESS_SCHEME'],
    ['credentials in a URL', { target: 'https://user:pw@example.com/' }, 'EGRESS_CREDENTIALS'],
  ])('refuses %s in an argument nothing declares', async (_what, args, code) => {
    const { call, tool } = setup({}, PLAIN);
    expect(expectRefused(await call(args)).code).toBe(code);
    expect(tool.calls).toHaveLength(0);
  });

  it('lets public URLs, prose that mentions an address, and version numbers through', async () => {
    const { call, tool } = setup({}, PLAIN);
    for (const args of [
      { url: 'https://en.wikipedia.org/wiki/Koa', note: 'see http://127.0.0.1 in the logs' },
      { version: '1.2.3.4', ip: '8.8.8.8', link: '/docs/page.html' },
    ])
      expect(expectResult(await call(args)).kind).toBe('result');
    expect(tool.calls).toHaveLength(2);
  });
});
