import { createDispatcher, DispatcherConfigError, type Identity } from '@toolgate/core';
import { canonicalChain, pathGuard, type PathGuardOptions } from '@toolgate/middleware';
import {
  eventsOf,
  expectRefused,
  expectResult,
  recordEvents,
  recordingTool,
  type RecordingToolSpec,
} from './fixtures';

const FILE_SCHEMA = {
  type: 'object',
  properties: {
    path: { type: 'string' },
    paths: { type: 'array', items: { type: 'string' } },
    mode: { type: 'string' },
  },
};

function setup(options: PathGuardOptions = {}, spec: RecordingToolSpec = { paths: { path: ['/srv/data'] } }) {
  const tool = recordingTool({ name: 'read_file', inputSchema: FILE_SCHEMA, ...spec });
  const dispatcher = createDispatcher({
    tools: [tool],
    chain: canonicalChain({ guards: { paths: options } }),
  });
  const events = recordEvents(dispatcher, ['path.refused']);
  const call = (args: Record<string, unknown>, identity?: Identity) =>
    dispatcher.dispatch({ toolName: 'read_file', args }, identity === undefined ? {} : { identity });
  return { tool, call, events };
}

const ESCAPES: [string, string, string][] = [
  ['/etc/passwd', 'an absolute path elsewhere', 'PATH_OUTSIDE_ROOT'],
  ['../../etc/passwd', 'a relative climb', 'PATH_OUTSIDE_ROOT'],
  ['/srv/data/../../etc/shadow', 'a climb out of the root', 'PATH_OUTSIDE_ROOT'],
  ['reports/../../secret', 'a climb past the start', 'PATH_OUTSIDE_ROOT'],
  ['%2e%2e/%2e%2e/etc/passwd', 'percent-encoded dots', 'PATH_OUTSIDE_ROOT'],
  ['%2E%2E%2F%2E%2E%2Fetc', 'percent-encoded slashes', 'PATH_OUTSIDE_ROOT'],
  ['%252e%252e%252fetc%252fpasswd', 'double encoding', 'PATH_OUTSIDE_ROOT'],
  ['..%2f..%5cetc', 'mixed raw and encoded', 'PATH_OUTSIDE_ROOT'],
  ['..\\..\\windows\\system32', 'backslashes', 'PATH_OUTSIDE_ROOT'],
  ['/srv/data\\..\\..\\etc', 'backslashes after the root', 'PATH_OUTSIDE_ROOT'],
  ['．．／．．／etc/passwd', 'fullwidth dots and solidus', 'PATH_OUTSIDE_ROOT'],
  ['/srv/data/.../x', 'three dots (Windows trims them to two)', 'PATH_OUTSIDE_ROOT'],
  ['/srv/data/.. /x', 'dots with a trailing space', 'PATH_OUTSIDE_ROOT'],
  ['/srv/database/x', 'a sibling sharing the prefix', 'PATH_OUTSIDE_ROOT'],
  ['/srv/data/report.txt\u0000.png', 'a NUL byte', 'PATH_NUL'],
  ['/srv/data/report%00.png', 'an encoded NUL', 'PATH_NUL'],
  ['%c0%ae%c0%ae/etc', 'overlong UTF-8 dots', 'PATH_ENCODING'],
  ['~/.ssh/id_rsa', 'a home directory', 'PATH_NOT_PLAIN'],
  ['file:///etc/passwd', 'a file URL', 'PATH_NOT_PLAIN'],
  ['\\\\attacker\\share\\x', 'a UNC share', 'PATH_NOT_PLAIN'],
  ['//srv/data/x', 'a leading double slash', 'PATH_NOT_PLAIN'],
  ['C:secrets.txt', 'a drive-relative path', 'PATH_NOT_PLAIN'],
];

describe('path guard', () => {
  it.each(ESCAPES)('refuses %j (%s) before the tool runs', async (path, _what, code) => {
    const { tool, call, events } = setup();

    const outcome = expectRefused(await call({ path }));

    expect(tool.calls).toHaveLength(0);
    expect(outcome).toMatchObject({ gate: 'path-guard', code, ran: false, retryable: false });
    expect(outcome.content).toMatch(
      /^\[path-guard refused: 'read_file' argument 'path' .+\. Retrying with the same path will not help\. Use a plain path under \/srv\/data\.\]$/,
    );
    expect(outcome.content).not.toContain(path);
    expect(eventsOf(events, 'path.refused')).toEqual([expect.objectContaining({ arg: 'path', code })]);
  });

  it('says what went wrong in words the model can act on', async () => {
    const { call } = setup();
    expect(expectRefused(await call({ path: '../x' })).content).toBe(
      "[path-guard refused: 'read_file' argument 'path' leads outside the directories it may use once `..`, encodings and separators are resolved. " +
        'Retrying with the same path will not help. Use a plain path under /srv/data.]',
    );
  });

  it.each([
    ['/srv/data/reports/2031.csv', '/srv/data/reports/2031.csv'],
    ['/srv/data', '/srv/data'],
    ['/srv/data/', '/srv/data'],
    ['reports/2031.csv', '/srv/data/reports/2031.csv'],
    ['./reports/../summary.md', '/srv/data/summary.md'],
    ['/srv/data/a/../b.txt', '/srv/data/b.txt'],
    ['/srv/data/notes..txt', '/srv/data/notes..txt'],
    ['/srv/data/..hidden', '/srv/data/..hidden'],
    ['/srv/data/100%25 done.txt', '/srv/data/100%25 done.txt'],
    ['/srv/data/ünïcödé/файл.txt', '/srv/data/ünïcödé/файл.txt'],
    ['', '/srv/data'],
  ])('lets a path inside the root through as the absolute path it approved: %j', async (path, seen) => {
    const { tool, call } = setup({ base: '/srv/data' });
    const outcome = expectResult(await call({ path }));
    expect(tool.calls.map((c) => c.args['path'])).toEqual([seen]);
    expect(outcome.ledger.find((row) => row.gate === 'path-guard')?.why).toMatch(
      /^1 path inside their roots/,
    );
  });

  describe('relative paths, read where the tool reads them (issue 32, finding 1)', () => {
    // The tool was started in '/': a relative path opens there, not under the root.
    it.each([['etc/passwd'], ['./etc/passwd'], ['proc/self/environ'], ['srv/data/../../etc/passwd']])(
      'refuses %j when the tool resolves it from /',
      async (path) => {
        const { tool, call } = setup({ base: '/' });
        expect(expectRefused(await call({ path })).code).toBe('PATH_OUTSIDE_ROOT');
        expect(tool.calls).toHaveLength(0);
      },
    );

    it.each([['etc/passwd'], ['./etc/passwd'], ['proc/self/environ'], ['reports/2031.csv'], ['']])(
      'refuses %j when where the tool reads it from is unknown',
      async (path) => {
        const { tool, call } = setup();
        const outcome = expectRefused(await call({ path }));
        expect(outcome.code).toBe('PATH_RELATIVE');
        expect(outcome.content).toContain(
          'is relative, and the directory the tool reads it from is not known',
        );
        expect(tool.calls).toHaveLength(0);
      },
    );

    it('hands the tool the absolute path, also inside lists and nested arguments', async () => {
      const schema = {
        type: 'object',
        properties: {
          paths: { type: 'array', items: { type: 'string' } },
          job: { type: 'object', properties: { file: { type: 'string' } } },
        },
      };
      const { tool, call } = setup(
        { base: (t) => (t.schema.name === 'read_file' ? '/srv/data/in' : undefined) },
        { paths: { 'paths.*': ['/srv/data'], 'job.file': ['/srv/data'] }, inputSchema: schema },
      );
      expectResult(await call({ paths: ['a.txt', '../b.txt', '/srv/data/c'], job: { file: './d/../e' } }));
      expect(tool.calls[0]!.args).toEqual({
        paths: ['/srv/data/in/a.txt', '/srv/data/b.txt', '/srv/data/c'],
        job: { file: '/srv/data/in/e' },
      });
      expect(expectRefused(await call({ paths: ['../../etc/passwd'] })).code).toBe('PATH_OUTSIDE_ROOT');
    });

    it('refuses a base that is not an absolute directory when the guard is built', () => {
      expect(() => pathGuard({ base: 'srv' })).toThrow(/base has 'srv', which is not an absolute directory/);
    });
  });

  describe('symbolic links, through realpath', () => {
    // A fake file system: /srv/data/link points at /etc, /srv/data/ok at /srv/data/real.
    const links: Record<string, string> = { '/srv/data/link': '/etc', '/srv/data/ok': '/srv/data/real' };
    const realpath = async (path: string) => {
      for (const [from, to] of Object.entries(links))
        if (path === from || path.startsWith(`${from}/`)) return to + path.slice(from.length);
      if (path.startsWith('/srv/data/missing')) throw new Error('EACCES');
      return path;
    };

    it('refuses a path whose real path leaves the root, and hands over the real path otherwise', async () => {
      const { tool, call } = setup({ base: '/srv/data', realpath });
      expect(expectRefused(await call({ path: 'link/passwd' })).code).toBe('PATH_OUTSIDE_ROOT');
      expect(expectRefused(await call({ path: '/srv/data/link' })).code).toBe('PATH_OUTSIDE_ROOT');
      expectResult(await call({ path: 'ok/x.txt' }));
      expect(tool.calls.map((c) => c.args['path'])).toEqual(['/srv/data/real/x.txt']);
    });

    it('refuses when the real path cannot be read (fails closed)', async () => {
      const { tool, call } = setup({ base: '/srv/data', realpath });
      expect(expectRefused(await call({ path: 'missing/x' })).code).toBe('PATH_OUTSIDE_ROOT');
      expect(tool.calls).toHaveLength(0);
    });
  });

  it('judges each item of an array, naming the one that escapes', async () => {
    const { tool, call } = setup({}, { paths: { 'paths.*': ['/srv/data'] } });
    const outcome = expectRefused(await call({ paths: ['/srv/data/a', '/srv/data/../../root/.bashrc'] }));
    expect(outcome.reason).toContain("argument 'paths.1'");
    expect(expectResult(await call({ paths: ['/srv/data/a', '/srv/data/b/c'] })).kind).toBe('result');
    expect(tool.calls).toHaveLength(1);
  });

  it('refuses a path argument that is not a string', async () => {
    const open = { type: 'object', properties: { target: {} } };
    const { call } = setup({}, { paths: { target: ['/srv/data'] }, inputSchema: open });
    expect(expectRefused(await call({ target: { path: '/etc' } })).code).toBe('PATH_NOT_PLAIN');
    expect(expectRefused(await call({ target: 42 })).code).toBe('PATH_NOT_PLAIN');
  });

  it('accepts any of several roots, and Windows roots case-insensitively', async () => {
    const { call } = setup({}, { paths: { path: ['/srv/data', 'C:\\Shares\\Reports'] } });
    expect(expectResult(await call({ path: '/srv/data/x' })).kind).toBe('result');
    expect(expectResult(await call({ path: 'c:/shares/reports/q1.xlsx' })).kind).toBe('result');
    expect(expectResult(await call({ path: 'C:\\SHARES\\Reports\\q2.xlsx' })).kind).toBe('result');
    expect(expectRefused(await call({ path: 'C:\\Shares\\Reports\\..\\Payroll\\x' })).code).toBe(
      'PATH_OUTSIDE_ROOT',
    );
    expect(expectRefused(await call({ path: 'D:\\Shares\\Reports\\x' })).code).toBe('PATH_OUTSIDE_ROOT');
  });

  describe('roots from the operator and per tenant', () => {
    const options: PathGuardOptions = {
      tools: { read_file: { path: ['/srv/data'] } },
      tenants: { acme: { read_file: { path: ['/srv/data/acme'] } } },
    };

    it('confines a tool that declares nothing, by the operator map', async () => {
      const { call, tool } = setup(options, {});
      expect(expectRefused(await call({ path: '/etc/hosts' })).code).toBe('PATH_OUTSIDE_ROOT');
      expect(expectResult(await call({ path: '/srv/data/globex/x' })).kind).toBe('result');
      expect(tool.calls).toHaveLength(1);
    });

    it("holds a tenant's calls to every root set that applies: the narrower one wins", async () => {
      const { call } = setup(options, {});
      const acme: Identity = { tenant: 'acme' };
      expect(expectResult(await call({ path: '/srv/data/acme/q1.csv' }, acme)).kind).toBe('result');
      const other = expectRefused(await call({ path: '/srv/data/globex/q1.csv' }, acme));
      expect(other.reason).toContain('Use a plain path under /srv/data/acme');
      expect(expectResult(await call({ path: '/srv/data/globex/q1.csv' }, { tenant: 'globex' })).kind).toBe(
        'result',
      );
    });

    it("intersects the tool's own declaration with the operator's", async () => {
      const { call } = setup(
        { tools: { read_file: { path: ['/srv'] } } },
        { paths: { path: ['/srv/data'] } },
      );
      expect(expectRefused(await call({ path: '/srv/other/x' })).code).toBe('PATH_OUTSIDE_ROOT');
      expect(expectResult(await call({ path: '/srv/data/x' })).kind).toBe('result');
    });

    it('refuses roots that are not absolute directories when the guard is built', () => {
      expect(() => pathGuard({ tools: { read_file: { path: ['srv/data'] } } })).toThrow(
        "pathGuard: tools.read_file.path has 'srv/data', which is not an absolute directory like '/srv/data'.",
      );
      expect(() => pathGuard({ tenants: { acme: { read_file: { path: [] } } } })).toThrow(
        /at least one root/,
      );
    });
  });

  it('is planned out of tools with no path arguments when values are not read', async () => {
    const { call } = setup({ values: false }, {});
    const outcome = expectResult(await call({ path: '/etc/passwd' }));
    expect(outcome.ledger.find((row) => row.gate === 'path-guard')).toEqual({
      gate: 'path-guard',
      outcome: 'allow',
      why: 'no path arguments',
      changed: false,
    });
  });

  it('makes a dispatcher refuse a tool that declares paths when no middleware enforces it', () => {
    const tool = recordingTool({
      name: 'read_file',
      inputSchema: FILE_SCHEMA,
      paths: { path: ['/srv/data'] },
    });
    expect(() =>
      createDispatcher({ tools: [tool], chain: canonicalChain({ guards: { paths: false } }) }),
    ).toThrow(DispatcherConfigError);
    expect(() => createDispatcher({ tools: [tool], chain: canonicalChain({ guards: {} }) })).not.toThrow();
  });

  it('refuses a paths declaration it cannot honor, at definition', () => {
    const define = (paths: unknown) =>
      recordingTool({ name: 'read_file', inputSchema: FILE_SCHEMA, paths: paths as never });
    expect(() => define({ path: ['relative/root'] })).toThrow(
      "tool 'read_file': 'paths.path' roots must be absolute directories without '..', like '/srv/data'.",
    );
    expect(() => define({ path: ['/srv/../etc'] })).toThrow(/without '\.\.'/);
    expect(() => define({ path: [] })).toThrow(/at least one root/);
    expect(() => define({ file: ['/srv'] })).toThrow(
      /'paths' names 'file', which is absent from the input schema/,
    );
    expect(() => define(['/srv'])).toThrow(/'paths' must map argument paths/);
  });

  it('keeps its declarations frozen once a dispatcher checked the tool', () => {
    const tool = recordingTool({
      name: 'read_file',
      inputSchema: FILE_SCHEMA,
      paths: { path: ['/srv/data'] },
    });
    createDispatcher({ tools: [tool], chain: canonicalChain({ guards: {} }) });
    expect(Object.isFrozen(tool.paths)).toBe(true);
    expect(Object.isFrozen(tool.paths!['path'])).toBe(true);
  });
});

describe('path guard: values first', () => {
  it.each([
    ['/etc/passwd', 'PATH_SENSITIVE'],
    ['/home/ann/.ssh/id_ed25519', 'PATH_SENSITIVE'],
    ['~/.aws/credentials', 'PATH_SENSITIVE'],
    ['file:///root/.bash_history', 'PATH_SENSITIVE'],
    ['/proc/self/environ', 'PATH_SENSITIVE'],
    ['C:\\Windows\\System32\\config\\SAM', 'PATH_SENSITIVE'],
    ['../../../../etc/hosts', 'PATH_TRAVERSAL'],
    ['notes/%2e%2e/%2e%2e/%2e%2e/x', 'PATH_TRAVERSAL'],
    ['..\\..\\boot.ini', 'PATH_TRAVERSAL'],
    ['/srv/data/report\u0000.png', 'PATH_NUL'],
  ])('refuses %j in an argument nothing declares', async (path, code) => {
    const { call, tool } = setup({}, {});
    expect(expectRefused(await call({ target: { file: path } })).code).toBe(code);
    expect(tool.calls).toHaveLength(0);
  });

  it('lets everyday paths and prose that mentions a file through', async () => {
    const { call, tool } = setup({}, {});
    for (const path of [
      '/home/ann/projects/site/src/index.ts',
      '../README.md',
      'src/components/Button.tsx',
      '~/Documents/taxes-2031.pdf',
      'Please do not share ~/.ssh/id_rsa with anyone',
      '/etc/nginx/nginx.conf',
    ])
      expect(expectResult(await call({ target: path })).kind).toBe('result');
    expect(tool.calls).toHaveLength(6);
  });
});
