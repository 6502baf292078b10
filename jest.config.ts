import type { Config } from 'jest';

const packages = ['core', 'middleware', 'testing', 'mcp', 'store-sqlite', 'examples'] as const;

// Tests import sibling packages from source, so no build is needed before `jest`.
const moduleNameMapper = {
  '^@toolgate/testing/jest$': '<rootDir>/packages/testing/src/jest.ts',
  '^@toolgate/(core|middleware|testing|mcp|store-sqlite)$': '<rootDir>/packages/$1/src/index.ts',
};

function project(name: (typeof packages)[number]): NonNullable<Config['projects']>[number] {
  const roots = name === 'examples' ? ['<rootDir>/examples'] : [`<rootDir>/packages/${name}/test`];
  return {
    displayName: name,
    rootDir: '.',
    roots,
    testEnvironment: 'node',
    testMatch: ['**/*.test.ts'],
    transform: { '^.+\\.(t|j|mj)sx?$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
    // typebox 1.x ships ESM only; let swc turn it into CommonJS for jest.
    transformIgnorePatterns: ['/node_modules/(?!(\\.pnpm/)?(typebox))'],
    moduleNameMapper,
  };
}

const config: Config = {
  projects: packages.map(project),
  testTimeout: 30_000,
};

export default config;
