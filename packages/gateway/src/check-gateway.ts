// checkGateway: what `toolgate check` does, as a function: validate, connect every upstream, and
// describe each tenant's tools with the declarations and limits that govern them. Never a secret.

import { matchesToolGlob } from '@toolgate/policy';
import { redact } from '@toolgate/core';
import { scrubbable, type LoadedConfig } from './config/load';
import { describePolicy, policyFacts } from './policy';
import { buildRuntime, closeRuntime, type Runtime } from './runtime';

export interface CheckGatewayOptions {
  /** Environment for credentials; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** The checked configuration's description; throws what building the gateway would (a ConfigError, …). */
export async function checkGateway(loaded: LoadedConfig, options: CheckGatewayOptions = {}): Promise<string> {
  const runtime = await buildRuntime(loaded, { env: options.env ?? process.env });
  try {
    // A root or a name written as ${env:…} is the operator's secret as much as a token: never shown.
    return redact(describeRuntime(runtime), scrubbable(loaded.secrets));
  } finally {
    await closeRuntime(runtime);
  }
}

function describeRuntime(runtime: Runtime): string {
  const { config } = runtime;
  const lines: string[] = [`${runtime.loaded.file ?? 'configuration'}: valid`];
  lines.push(`stores: state ${runtime.state.kind}, limits ${runtime.limits.kind}`);
  if (runtime.audit !== undefined)
    lines.push(
      `audit: ${runtime.audit.kind} store, records signed (onAuditFailure: ${config.audit?.onAuditFailure ?? 'refuse'})`,
    );
  const auth = [
    ...(config.auth?.tokens !== undefined ? [`${config.auth.tokens.length} static token(s)`] : []),
    ...(config.auth?.jwt !== undefined ? ['JWT'] : []),
  ];
  lines.push(`auth: ${auth.length > 0 ? auth.join(', ') : 'none (HTTP serving refuses to start)'}`);
  lines.push('upstreams:');
  for (const [name, upstream] of runtime.upstreams) {
    const kind = config.upstreams[name]?.command !== undefined ? 'stdio' : 'http';
    const auth = config.upstreams[name]?.auth;
    const onBehalf = [
      ...(auth?.tokenExchange !== undefined ? ['token exchange per caller'] : []),
      ...(auth?.clientCredentials !== undefined ? ["the gateway's own token on 401"] : []),
    ];
    lines.push(
      `  ${name} (${kind}): ${upstream.status().state}, ${upstream.tools.length} tool(s)${onBehalf.length > 0 ? `; auth: ${onBehalf.join(', ')}` : ''}`,
    );
    // An upstream waiting for authorization starts anyway (upstream.ts): say what it waits for.
    const status = upstream.status();
    if (status.state !== 'connected' && status.error !== undefined) lines.push(`    ${status.error}`);
    for (const skipped of upstream.status().skipped ?? [])
      lines.push(`    not listed: ${skipped.tool}: ${skipped.reason}`);
  }
  lines.push('tenants:');
  for (const [name, tenant] of runtime.tenants) {
    const chain = tenant.chain.names();
    lines.push(
      `  ${name}: upstreams ${config.tenants[name]!.upstreams.join(', ')}; chain ${tenant.chain.id}: ${chain.join(' → ')}`,
    );
    if (tenant.policy !== undefined) lines.push(`    ${describePolicy(tenant.policy)}`);
    const limits = [...(config.limits ?? []), ...(config.tenants[name]!.limits ?? [])];
    for (const tool of tenant.tools) {
      const facts: string[] = [`from ${tenant.sourceOf.get(tool.schema.name)}`];
      if (tool.checkIn !== undefined) facts.push('check-in: always');
      if (tool.capabilities !== undefined) facts.push(`capabilities: ${tool.capabilities.join(', ')}`);
      if (tool.egress !== undefined) facts.push(`egress: ${tool.egress.join(', ')}`);
      for (const [arg, roots] of Object.entries(tool.paths ?? {}))
        facts.push(`paths: ${arg} under ${roots.join(', ')}`);
      const ceiling = tool.resultCeiling?.maxChars ?? config.defaults?.resultCeiling?.maxChars;
      if (ceiling !== undefined) facts.push(`ceiling: ${ceiling} chars`);
      const applying = limits.filter(
        (limit) => limit.tools === undefined || matchesToolGlob(tool.schema.name, limit.tools),
      );
      if (applying.length > 0) facts.push(`limits: ${applying.map((limit) => limit.name).join(', ')}`);
      if (tenant.policy !== undefined) facts.push(policyFacts(tenant.policy, tool));
      const hints = Object.entries(tool.annotations ?? {})
        .filter(([, value]) => value === true)
        .map(([hint]) => hint);
      if (hints.length > 0) facts.push(`annotations: ${hints.join(', ')}`);
      lines.push(`    ${tool.schema.name}  ${facts.join('; ')}`);
    }
  }
  return lines.join('\n');
}
