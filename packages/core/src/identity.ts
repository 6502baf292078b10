/** Who a call is made for. Every field is optional; stores scope data by all three. */
export interface Identity {
  readonly tenant?: string;
  readonly principal?: string;
  readonly conversation?: string;
  /** What the caller may do, as its authenticator says (`['approver']`); policy reads `identity.roles`. */
  readonly roles?: readonly string[];
}

/** The scope an artifact lives in: the call's identity, narrowed to the three scoping fields. */
export type ArtifactScope = Identity;

/** Copies only the scoping fields that are present, so absent stays absent. */
export function scopeOf(identity: Identity | undefined): ArtifactScope {
  const scope: { tenant?: string; principal?: string; conversation?: string } = {};
  if (identity?.tenant !== undefined) scope.tenant = identity.tenant;
  if (identity?.principal !== undefined) scope.principal = identity.principal;
  if (identity?.conversation !== undefined) scope.conversation = identity.conversation;
  return scope;
}
