import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from 'jest';

// Node 22+ loads this file as an ES module (type stripping), where there is no __dirname; jest runs
// from the repository root there.
const root = typeof __dirname === 'string' ? __dirname : process.cwd();

// Every folder under packages/ is a jest project, plus the examples; a new package needs no edit here.
const packages = [...readdirSync(join(root, 'packages')).sort(), 'examples', 'test-support'];

// Tests import sibling packages from source, so no build is needed before `jest`.
const moduleNameMapper = {
  '^@toolgate/testing/jest$': '<rootDir>/packages/testing/src/jest.ts',
  '^@toolgate/([a-z0-9-]+)$': '<rootDir>/packages/$1/src/index.ts',
};

const testFolder = (name: string): string =>
  name === 'examples' || name === 'test-support' ? name : `packages/${name}/test`;

function project(name: string): NonNullable<Config['projects']>[number] {
  const roots = [`<rootDir>/${testFolder(name)}`];
  return {
    displayName: name,
    rootDir: '.',
    roots,
    testEnvironment: 'node',
    testMatch: ['**/*.test.ts'],
    transform: { '^.+\\.(t|j|mj)sx?$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
    // typebox 1.x, CEL (@marcbachmann/cel-js), jose, oauth4webapi and the AI SDK (ai, @ai-sdk/*, @workflow/*, and zod files imported by path) ship ESM only; let swc turn them into CommonJS for jest.
    transformIgnorePatterns: [
      '/node_modules/(?!(\\.pnpm/)?(typebox|ai|@ai-sdk|zod|@workflow|@marcbachmann|jose|oauth4webapi))',
    ],
    moduleNameMapper,
  };
}

const config: Config = {
  // A package with no tests yet has no test folder in a fresh clone, and jest rejects a missing root.
  projects: packages.filter((name) => existsSync(join(root, testFolder(name)))).map(project),
  testTimeout: 30_000,
  globalSetup: '<rootDir>/test-support/global-setup.ts',
};

export default config;
