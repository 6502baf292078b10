// testGatewayPolicy: what `toolgate policy test` does, as a function: decide each case with the rules
// its tenant's chain runs (global, then the tenant's own, typed against the tools the upstreams really
// serve), and say which decided as expected.

import { runPolicyTests, type PolicyTestCase, type PolicyTestResult } from '@toolgate/policy';
import type { LoadedConfig } from './config/load';
import { buildRuntime, closeRuntime } from './runtime';

export interface TestGatewayPolicyOptions {
  /** Environment for credentials; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * One result per case, in the cases' order (`index` is the case's position). A case that names no
 * configured tenant, or a tool its tenant does not serve, fails with a `problem` instead of deciding.
 */
export async function testGatewayPolicy(
  loaded: LoadedConfig,
  cases: readonly PolicyTestCase[],
  options: TestGatewayPolicyOptions = {},
): Promise<PolicyTestResult[]> {
  const runtime = await buildRuntime(loaded, { env: options.env ?? process.env });
  try {
    const tenantNames = [...runtime.tenants.keys()];
    const results = new Map<number, PolicyTestResult>();
    const fail = (index: number, testCase: PolicyTestCase, problem: string) =>
      results.set(index, {
        index,
        ...(typeof testCase.name === 'string' ? { name: testCase.name } : {}),
        passed: false,
        expected: testCase.expect,
        shadows: [],
        problem,
      });
    const byTenant = new Map<string, { index: number; testCase: PolicyTestCase }[]>();
    for (const [index, testCase] of cases.entries()) {
      const tenant = testCase.identity?.tenant ?? (tenantNames.length === 1 ? tenantNames[0] : undefined);
      if (tenant === undefined) {
        fail(index, testCase, `name the tenant in identity.tenant (one of: ${tenantNames.join(', ')}).`);
        continue;
      }
      const served = runtime.tenants.get(tenant);
      if (served === undefined) {
        fail(index, testCase, `the tenant '${tenant}' is not configured.`);
        continue;
      }
      const toolName = typeof testCase.tool === 'string' ? testCase.tool : undefined;
      if (toolName !== undefined && !served.tools.some((tool) => tool.schema.name === toolName)) {
        fail(index, testCase, `the tenant '${tenant}' serves no tool named '${toolName}'.`);
        continue;
      }
      const group = byTenant.get(tenant) ?? [];
      group.push({ index, testCase: { ...testCase, identity: { ...testCase.identity, tenant } } });
      byTenant.set(tenant, group);
    }
    for (const [tenant, group] of byTenant) {
      const served = runtime.tenants.get(tenant)!;
      const report = runPolicyTests(
        served.policy?.rules ?? [],
        group.map((entry) => entry.testCase),
        { tools: served.tools, ...(served.policy !== undefined ? { default: served.policy.default } : {}) },
      );
      report.results.forEach((result, position) => {
        const { index } = group[position]!;
        results.set(index, { ...result, index });
      });
    }
    return cases.map((_, index) => results.get(index)!);
  } finally {
    await closeRuntime(runtime);
  }
}
