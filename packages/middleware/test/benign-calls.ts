// The benign corpus the guards' false-positive rate is measured on: calls to the tools of the MCP
// reference servers (filesystem, fetch, git, memory, time, everything, sqlite, github, slack, brave
// search, puppeteer, sequential thinking) with everyday arguments, each with the kind of result the
// server returns. Built from lists of ordinary values, so it is many times the attack table's size
// (guard-vectors.ts); benign-calls.test.ts plays every call with every guard on.

export interface BenignCall {
  readonly server: string;
  readonly tool: string;
  readonly args: Record<string, unknown>;
  /** What the server answers: MCP content blocks. */
  readonly result: { content: { type: 'text'; text: string }[]; structuredContent?: Record<string, unknown> };
}

const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });

const PATHS = [
  '/home/ann/projects/site/src/index.ts',
  '/home/ann/projects/site/package.json',
  '/home/ann/projects/site/README.md',
  '/Users/bob/Documents/Q3 report.docx',
  '/Users/bob/Desktop/screenshot 2031-03-04 at 10.12.55.png',
  'src/components/Button.tsx',
  'docs/getting-started.md',
  '../README.md',
  './scripts/build.sh',
  'C:\\Users\\ann\\Desktop\\invoice-0042.pdf',
  '/etc/nginx/nginx.conf',
  '/var/log/nginx/access.log',
  '/tmp/build-2031.log',
  '~/Documents/taxes-2031.pdf',
  '/srv/data/reports/2031.csv',
  'notes/meeting-2031-03-04.md',
  '/home/ann/projects/api/.github/workflows/ci.yml',
  '/home/ann/projects/api/.gitignore',
  '/home/ann/projects/api/.env.example',
  '/home/ann/projects/api/src/routes/users.ts',
  '/opt/app/config/settings.yaml',
  'data/customers_2031-03.json',
  '/home/ann/.config/Code/User/settings.json',
  '/workspace/monorepo/packages/core/src/context.ts',
];

const FILE_CONTENTS = [
  "import { createServer } from 'node:http';\n\nconst port = Number(process.env.PORT ?? 3000);\ncreateServer((req, res) => res.end('ok')).listen(port);\n",
  '{\n  "name": "site",\n  "version": "1.4.2",\n  "scripts": { "build": "vite build", "test": "vitest run" }\n}\n',
  '# Site\n\nRun `npm install`, then `npm run dev`. You can ignore the peer dependency warning.\n',
  'date,region,revenue\n2031-01-01,eu-west-1,1200.50\n2031-01-02,us-east-1,980.00\n',
  'server {\n  listen 80;\n  server_name example.org;\n  location / { proxy_pass http://127.0.0.1:3000; }\n}\n',
  '- [ ] ship the parser fix\n- [x] review PR #42\n- [ ] book the room for Thursday\n',
  'name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: npm ci && npm test\n',
  'DATABASE_URL=postgres://localhost:5432/app\nPORT=3000\nLOG_LEVEL=info\n',
  '#!/bin/sh\nset -eu\nnpm ci\nnpm run build\n',
  'Dear Ms. Novak,\n\nPlease find the invoice for March attached. Payment is due within 30 days.\n\nKind regards,\nAnn',
];

const URLS = [
  'https://en.wikipedia.org/wiki/Lisbon',
  'https://developer.mozilla.org/en-US/docs/Web/JavaScript/Reference/Global_Objects/Array/map',
  'https://docs.python.org/3/library/pathlib.html',
  'https://nodejs.org/api/fs.html#fspromisesreadfilepath-options',
  'https://github.com/modelcontextprotocol/servers/blob/main/README.md',
  'https://www.bbc.com/news/technology',
  'https://news.ycombinator.com/item?id=40000000',
  'https://stackoverflow.com/questions/1732348/regex-match-open-tags-except-xhtml-self-contained-tags',
  'https://api.github.com/repos/nodejs/node/releases/latest',
  'https://www.example.org/pricing?plan=team&period=annual',
  'https://arxiv.org/abs/2310.06770',
  'https://www.gov.uk/bank-holidays.json',
  'https://weather.example.com/v1/forecast?lat=38.72&lon=-9.14',
  'https://[2606:4700:4700::1111]/dns-query?name=example.org',
  'https://docs.example.org/guide/install#linux',
  'http://neverssl.com/',
  'https://raw.githubusercontent.com/nodejs/node/main/README.md',
  'https://www.rfc-editor.org/rfc/rfc9110.html',
  'https://pypi.org/project/requests/',
  'https://www.npmjs.com/package/koa',
];

const PAGES = [
  'Lisbon is the capital and largest city of Portugal, with an estimated population of 567,131.',
  'The map() method of Array instances creates a new array populated with the results of calling a provided function on every element.',
  'System requirements:\n- 4 GB of memory\n- Node 20 or later\n\nInstall with your package manager.',
  'Release v22.3.0. Notable changes: fs.glob is stable; the test runner supports snapshots.',
  'Ask HN: How do you keep a home lab tidy? 312 comments. Top answer: label every cable.',
  'Pricing: Team plan 12 EUR per user per month, billed annually. Cancel any time.',
  'Forecast: sunny, 24 °C, wind 12 km/h NW. Tomorrow: clouds in the afternoon.',
  'Troubleshooting: you can ignore the warning about optional dependencies; run install again if the lockfile is stale.',
  'Abstract: We introduce a benchmark of 2,294 software engineering problems drawn from real GitHub issues.',
  '{"name":"requests","version":"2.32.3","summary":"Python HTTP for Humans."}',
];

const REPOS = [
  '/home/ann/projects/site',
  '/home/ann/projects/api',
  '/workspace/monorepo',
  'C:\\src\\billing',
];
const COMMIT_MESSAGES = [
  'fix: handle empty input in the parser',
  'feat(api): add pagination to /users',
  'docs: explain how ../ paths resolve in the CLI',
  'chore: bump dependencies; regenerate the lockfile',
  'fix: use the `id` column instead of `uuid`',
  'refactor: split context.ts into smaller modules',
  'test: cover the retry path & the timeout path',
  'ci: run tests on Node 22 and 24',
  'Revert "feat: experimental cache"',
  'style: format with prettier',
  'fix(auth): refresh the session before it expires',
  'build: drop the postinstall script',
];
const BRANCHES = ['feature/pagination', 'fix/parser-empty-input', 'release/1.5', 'ann/docs-paths', 'main'];

const QUERIES = [
  'best hiking trails near Sintra',
  'node 22 release notes',
  'how to rotate AWS access keys safely',
  'python pathlib vs os.path',
  'weather Lisbon tomorrow',
  'cat & dog grooming prices',
  'ignore case in grep',
  'system design interview questions',
  'what does rm -rf do',
  'difference between ; and && in bash',
  'recipes with chickpeas',
  'TypeScript satisfies operator',
];

const SQL = [
  'SELECT id, name FROM users ORDER BY created_at DESC LIMIT 10',
  "SELECT count(*) FROM orders WHERE status = 'shipped'",
  "SELECT region, sum(revenue) FROM sales WHERE day >= '2031-01-01' GROUP BY region",
  'SELECT * FROM products WHERE price BETWEEN 10 AND 20',
  "UPDATE tickets SET status = 'closed' WHERE id = 42",
  "INSERT INTO notes (title, body) VALUES ('Standup', 'Ship the parser fix; review #42')",
  'SELECT u.email FROM users u JOIN orders o ON o.user_id = u.id WHERE o.total > 100',
  'PRAGMA table_info(users)',
];

const MESSAGES = [
  'Build 2031 is green; deploying at 5.',
  'Standup moved to 10:30 tomorrow.',
  'Can someone review PR #42? It touches the parser.',
  'Reminder: the office is closed on Friday.',
  'Lunch at the Thai place? 12:30 | meet in the lobby',
  'The deploy failed with exit code 1 — looking into it now.',
  'FYI the staging URL is https://staging.example.org/app',
  'Thanks everyone for a great quarter!',
];

const TIMEZONES = [
  'Europe/Lisbon',
  'America/New_York',
  'Asia/Tokyo',
  'Australia/Sydney',
  'UTC',
  'America/Sao_Paulo',
];

const ENTITIES = [
  ['Ann Novak', 'person', ['works on the billing team', 'prefers e-mail over chat']],
  ['Project Atlas', 'project', ['due in Q3', 'owner: Ann Novak']],
  ['Lisbon office', 'place', ['opened in 2029', 'has 40 desks']],
  ['Parser', 'component', ['written in TypeScript', 'has 94% test coverage']],
  ['Acme Corp', 'organization', ['customer since 2027', 'uses the Team plan']],
] as const;

const THOUGHTS = [
  'First, list the files that changed in the last commit.',
  'The failing test reads the config before it is written; reorder the steps.',
  'Compare the two timezones: Lisbon is UTC+1 in summer.',
  'Check whether the user asked for the annual or the monthly price.',
];

function build(): BenignCall[] {
  const calls: BenignCall[] = [];
  const add = (server: string, tool: string, args: Record<string, unknown>, result: BenignCall['result']) =>
    calls.push({ server, tool, args, result });

  PATHS.forEach((path, i) => {
    const content = FILE_CONTENTS[i % FILE_CONTENTS.length]!;
    add('filesystem', 'read_text_file', { path }, text(content));
    add(
      'filesystem',
      'get_file_info',
      { path },
      text(`size: ${1000 + i * 37}\ncreated: 2031-03-0${(i % 9) + 1}\nisFile: true\npermissions: 644`),
    );
    add('filesystem', 'write_file', { path, content }, text(`Successfully wrote to ${path}`));
    add(
      'filesystem',
      'edit_file',
      { path, edits: [{ oldText: 'version', newText: 'version' }], dryRun: i % 2 === 0 },
      text('```diff\n@@ -1 +1 @@\n-version\n+version\n```'),
    );
    const dir = path.replace(/[/\\][^/\\]*$/, '') || '.';
    add(
      'filesystem',
      'list_directory',
      { path: dir },
      text('[FILE] index.ts\n[FILE] package.json\n[DIR] src\n[DIR] test'),
    );
    add(
      'filesystem',
      'search_files',
      { path: dir, pattern: i % 2 === 0 ? '*.ts' : 'report', excludePatterns: ['node_modules'] },
      text(`${dir}/a.ts\n${dir}/b.ts`),
    );
    add(
      'filesystem',
      'move_file',
      { source: path, destination: `${path}.bak` },
      text(`Successfully moved ${path} to ${path}.bak`),
    );
  });
  add('filesystem', 'list_allowed_directories', {}, text('Allowed directories:\n/home/ann/projects\n/tmp'));
  add(
    'filesystem',
    'create_directory',
    { path: '/home/ann/projects/site/src/hooks' },
    text('Successfully created directory'),
  );
  add(
    'filesystem',
    'directory_tree',
    { path: '/home/ann/projects/site' },
    text(
      JSON.stringify([{ name: 'src', type: 'directory', children: [{ name: 'index.ts', type: 'file' }] }]),
    ),
  );

  URLS.forEach((url, i) => {
    add(
      'fetch',
      'fetch',
      { url, max_length: 5000, raw: i % 3 === 0 },
      text(`Contents of ${url}:\n${PAGES[i % PAGES.length]!}`),
    );
    add('puppeteer', 'puppeteer_navigate', { url }, text(`Navigated to ${url}`));
    add(
      'puppeteer',
      'puppeteer_screenshot',
      { name: `page-${i}`, selector: i % 2 === 0 ? 'main' : '#content' },
      text(`Screenshot 'page-${i}' taken at 800x600`),
    );
  });

  REPOS.forEach((repo_path, r) => {
    add(
      'git',
      'git_status',
      { repo_path },
      text('On branch main\nChanges not staged for commit:\n  modified:   src/index.ts'),
    );
    add(
      'git',
      'git_log',
      { repo_path, max_count: 5 + r },
      text(
        'Commit: 3f786850e387550fdab836ed7e6dc881de23001b\nAuthor: Ann Novak\nDate: 2031-03-04\nMessage: fix: handle empty input',
      ),
    );
    add(
      'git',
      'git_diff_unstaged',
      { repo_path },
      text('diff --git a/src/index.ts b/src/index.ts\n-const a = 1;\n+const a = 2;'),
    );
    add(
      'git',
      'git_diff',
      { repo_path, target: 'main' },
      text('diff --git a/README.md b/README.md\n+Run `npm test` before you push.'),
    );
    add(
      'git',
      'git_show',
      { repo_path, revision: 'HEAD~1' },
      text('commit 9c1e5b2d\n\n    docs: explain paths'),
    );
    COMMIT_MESSAGES.forEach((message) =>
      add(
        'git',
        'git_commit',
        { repo_path, message },
        text(`Changes committed successfully with hash 3f78685${r}`),
      ),
    );
    add(
      'git',
      'git_add',
      { repo_path, files: ['src/index.ts', 'README.md', 'docs/guide.md'] },
      text('Files staged successfully'),
    );
    BRANCHES.forEach((branch_name) => {
      add(
        'git',
        'git_create_branch',
        { repo_path, branch_name, base_branch: 'main' },
        text(`Created branch '${branch_name}' from 'main'`),
      );
      add('git', 'git_checkout', { repo_path, branch_name }, text(`Switched to branch '${branch_name}'`));
    });
  });

  for (const [name, entityType, observations] of ENTITIES) {
    add(
      'memory',
      'create_entities',
      { entities: [{ name, entityType, observations: [...observations] }] },
      text(JSON.stringify([{ name, entityType, observations }])),
    );
    add(
      'memory',
      'add_observations',
      { observations: [{ entityName: name, contents: ['met on 2031-03-04'] }] },
      text(JSON.stringify([{ entityName: name, addedObservations: ['met on 2031-03-04'] }])),
    );
    add(
      'memory',
      'search_nodes',
      { query: name.split(' ')[0]! },
      text(JSON.stringify({ entities: [{ name, entityType, observations }], relations: [] })),
    );
    add(
      'memory',
      'open_nodes',
      { names: [name] },
      text(JSON.stringify({ entities: [{ name, entityType, observations }] })),
    );
  }
  add(
    'memory',
    'read_graph',
    {},
    text(
      JSON.stringify({
        entities: ENTITIES.map(([name, entityType]) => ({ name, entityType })),
        relations: [],
      }),
    ),
  );
  add(
    'memory',
    'create_relations',
    { relations: [{ from: 'Ann Novak', to: 'Project Atlas', relationType: 'owns' }] },
    text('[{"from":"Ann Novak","to":"Project Atlas","relationType":"owns"}]'),
  );

  TIMEZONES.forEach((timezone, i) => {
    add(
      'time',
      'get_current_time',
      { timezone },
      {
        ...text(JSON.stringify({ timezone, datetime: '2031-03-04T10:12:55+00:00', is_dst: false })),
        structuredContent: { timezone, datetime: '2031-03-04T10:12:55+00:00', is_dst: false },
      },
    );
    add(
      'time',
      'convert_time',
      {
        source_timezone: timezone,
        time: `1${i}:30`,
        target_timezone: TIMEZONES[(i + 1) % TIMEZONES.length]!,
      },
      text(
        JSON.stringify({
          source: { timezone },
          target: { timezone: TIMEZONES[(i + 1) % TIMEZONES.length] },
          time_difference: '+1.0h',
        }),
      ),
    );
  });

  MESSAGES.forEach((message, i) => {
    add('everything', 'echo', { message }, text(`Echo: ${message}`));
    add('everything', 'add', { a: i, b: i * 2 }, text(`The sum of ${i} and ${i * 2} is ${i * 3}.`));
    add(
      'slack',
      'slack_post_message',
      { channel_id: `C0${i}ABCDEF`, text: message },
      text(JSON.stringify({ ok: true, channel: `C0${i}ABCDEF`, ts: `1712345678.00${i}` })),
    );
    add(
      'slack',
      'slack_reply_to_thread',
      { channel_id: `C0${i}ABCDEF`, thread_ts: `1712345678.00${i}`, text: `Re: ${message}` },
      text('{"ok":true}'),
    );
  });
  add(
    'everything',
    'longRunningOperation',
    { duration: 5, steps: 5 },
    text('Long running operation completed. Duration: 5 seconds, Steps: 5.'),
  );
  add(
    'everything',
    'printEnv',
    {},
    text(JSON.stringify({ NODE_ENV: 'production', PORT: '3000', LANG: 'en_US.UTF-8' })),
  );

  QUERIES.forEach((query, i) => {
    add(
      'brave-search',
      'brave_web_search',
      { query, count: 10, offset: i % 3 },
      text(`Title: ${query}\nDescription: ${PAGES[i % PAGES.length]!}\nURL: ${URLS[i % URLS.length]!}`),
    );
    add(
      'github',
      'search_repositories',
      { query, page: 1, perPage: 10 },
      text(
        JSON.stringify({
          total_count: 3,
          items: [{ full_name: 'nodejs/node', description: 'Node.js JavaScript runtime' }],
        }),
      ),
    );
    add(
      'github',
      'create_issue',
      {
        owner: 'acme',
        repo: 'site',
        title: `Question: ${query}`,
        body: `Steps to reproduce:\n1. Open the page\n2. Search for "${query}"\n\nExpected: results.`,
        labels: ['question'],
      },
      text(JSON.stringify({ number: 100 + i, html_url: `https://github.com/acme/site/issues/${100 + i}` })),
    );
  });

  SQL.forEach((query, i) => {
    add(
      'sqlite',
      i < 4 || i > 5 ? 'read_query' : 'write_query',
      { query },
      text(
        JSON.stringify([
          { id: 1, name: 'Ann' },
          { id: 2, name: 'Bob' },
        ]),
      ),
    );
    add('postgres', 'query', { sql: query }, text(JSON.stringify([{ count: 42 }])));
  });
  add('sqlite', 'list_tables', {}, text('["users","orders","products","notes"]'));
  add(
    'sqlite',
    'describe_table',
    { table_name: 'users' },
    text('[{"name":"id","type":"INTEGER"},{"name":"email","type":"TEXT"}]'),
  );

  THOUGHTS.forEach((thought, i) =>
    add(
      'sequential-thinking',
      'sequentialthinking',
      {
        thought,
        thoughtNumber: i + 1,
        totalThoughts: THOUGHTS.length,
        nextThoughtNeeded: i < THOUGHTS.length - 1,
      },
      text(
        JSON.stringify({
          thoughtNumber: i + 1,
          totalThoughts: THOUGHTS.length,
          nextThoughtNeeded: i < THOUGHTS.length - 1,
        }),
      ),
    ),
  );
  return calls;
}

export const BENIGN_CALLS: readonly BenignCall[] = build();
