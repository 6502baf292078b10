// What a reload does to security, judged rather than only recorded: a policy rule removed or
// widened, a guard turned off or opened up, a tool set no longer held for review, a tenant given an
// upstream, a limit dropped. Each is named in words an operator reads in the reload event and the
// audit log; with `reload.requireApproval: weakening` such a reload does not take effect on its own.

import type { GatewayConfig, GuardsConfig, PolicyConfig, RuleConfig } from './config/types';

const STRICTNESS: Record<RuleConfig['effect'], number> = { allow: 0, ask: 1, deny: 2 };

function rulesOf(policy: PolicyConfig | undefined): readonly RuleConfig[] {
  if (policy === undefined) return [];
  return Array.isArray(policy) ? policy : ((policy as { rules?: readonly RuleConfig[] }).rules ?? []);
}

function defaultOf(policy: PolicyConfig | undefined): RuleConfig['effect'] | undefined {
  return policy === undefined || Array.isArray(policy)
    ? undefined
    : (policy as { default?: RuleConfig['effect'] }).default;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

function policyWeakenings(
  where: string,
  before: PolicyConfig | undefined,
  after: PolicyConfig | undefined,
): string[] {
  const out: string[] = [];
  const next = new Map(rulesOf(after).map((rule) => [rule.name, rule]));
  for (const rule of rulesOf(before)) {
    const now = next.get(rule.name);
    if (now === undefined) {
      if (rule.effect !== 'allow') out.push(`${where}: rule '${rule.name}' (${rule.effect}) removed`);
      continue;
    }
    if (STRICTNESS[now.effect] < STRICTNESS[rule.effect])
      out.push(`${where}: rule '${rule.name}' widened from ${rule.effect} to ${now.effect}`);
    else if (rule.effect !== 'allow' && (!same(rule.tools, now.tools) || !same(rule.when, now.when)))
      out.push(
        `${where}: rule '${rule.name}' (${rule.effect}) matches differently (its tools or condition changed)`,
      );
    if ((rule.mode ?? 'enforce') === 'enforce' && now.mode === 'shadow')
      out.push(`${where}: rule '${rule.name}' moved to shadow mode (no longer enforced)`);
    if (rule.effect === 'allow' && !same(rule.tools, now.tools))
      out.push(`${where}: allow rule '${rule.name}' matches differently (its tools changed)`);
  }
  const known = new Set(rulesOf(before).map((rule) => rule.name));
  for (const rule of rulesOf(after))
    if (!known.has(rule.name) && rule.effect === 'allow')
      out.push(`${where}: allow rule '${rule.name}' added`);
  const [was, is] = [defaultOf(before), defaultOf(after)];
  if (was !== undefined && (is === undefined || STRICTNESS[is] < STRICTNESS[was]))
    out.push(`${where}: the default widened from ${was} to ${is ?? 'the built-in default'}`);
  return out;
}

const GUARDS = ['egress', 'paths', 'commands', 'secrets', 'crossServer', 'results'] as const;

function guardWeakenings(
  where: string,
  before: GuardsConfig | undefined,
  after: GuardsConfig | undefined,
): string[] {
  const out: string[] = [];
  const on = (value: unknown) => value !== undefined && value !== false;
  // The egress allow-list is judged on its own below; the rest of a guard's settings as a whole.
  const settings = (guard: string, value: unknown) =>
    guard === 'egress' && typeof value === 'object' && value !== null
      ? { ...(value as Record<string, unknown>), allowHosts: undefined }
      : value;
  for (const guard of GUARDS) {
    const was = before?.[guard];
    const is = after?.[guard];
    if (on(was) && !on(is)) out.push(`${where}: the ${guard} guard turned off`);
    else if (
      on(was) &&
      typeof was === 'object' &&
      typeof is === 'object' &&
      !same(settings(guard, was), settings(guard, is))
    )
      out.push(`${where}: the ${guard} guard's settings changed (review whether it still stops what it did)`);
  }
  const hosts = (value: unknown) =>
    typeof value === 'object' && value !== null
      ? (value as { allowHosts?: readonly string[] }).allowHosts
      : undefined;
  const [wasHosts, isHosts] = [hosts(before?.egress), hosts(after?.egress)];
  if (
    on(after?.egress) &&
    wasHosts !== undefined &&
    (isHosts === undefined || isHosts.some((host) => !wasHosts.includes(host)))
  )
    out.push(`${where}: the egress allow-list widened`);
  return out;
}

/** Every way `after` is less safe than `before`, one sentence each; empty when none. */
export function weakenings(before: GatewayConfig, after: GatewayConfig): string[] {
  const out = [
    ...policyWeakenings('policy', before.policy, after.policy),
    ...guardWeakenings('guards', before.guards, after.guards),
  ];
  if ((before.pins?.newTools ?? 'review') === 'review' && after.pins?.newTools === 'allow')
    out.push('pins: tools an upstream adds are no longer held for review (newTools: allow)');
  if (before.stores?.state !== after.stores?.state)
    out.push('stores.state changed: every tool is pinned again on first sight in the new store');
  if ((before.limits?.length ?? 0) > (after.limits?.length ?? 0)) out.push('limits: a limit removed');
  if (before.reload?.requireApproval === 'weakening' && after.reload?.requireApproval !== 'weakening')
    out.push('reload: a reload that weakens security no longer waits for an operator');
  for (const [name, tenant] of Object.entries(after.tenants)) {
    const was = before.tenants[name];
    const given = tenant.upstreams.filter((upstream) => !(was?.upstreams ?? []).includes(upstream));
    if (given.length > 0)
      out.push(
        `tenant '${name}' given upstream${given.length === 1 ? '' : 's'} ${given.map((u) => `'${u}'`).join(', ')}`,
      );
    if (was === undefined) continue;
    out.push(...policyWeakenings(`tenant '${name}' policy`, was.policy, tenant.policy));
    out.push(...guardWeakenings(`tenant '${name}' guards`, was.guards, tenant.guards));
    if ((was.limits?.length ?? 0) > (tenant.limits?.length ?? 0))
      out.push(`tenant '${name}': a limit removed`);
  }
  return out;
}
