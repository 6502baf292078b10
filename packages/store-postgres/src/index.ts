// Every export here is public API of @toolgate/store-postgres.

export type { PostgresArtifactsOptions, PostgresArtifactStore } from './artifacts';
export { postgresArtifacts } from './artifacts';
export type { PostgresAuditStore, PostgresAuditStoreOptions } from './audit';
export { postgresAuditStore } from './audit';
export type { PostgresCheckInsOptions, PostgresCheckInStore } from './check-ins';
export { postgresCheckIns } from './check-ins';
export type { PostgresPool, PostgresStoreOptions } from './connection';
export { PostgresStoreError } from './errors';
export type { PostgresPinsOptions, PostgresPinStore } from './pins';
export { postgresPins } from './pins';
export type {
  PostgresSpentStatesOptions,
  PostgresSpentStateStore,
  PostgresStandingGrantsOptions,
  PostgresStandingGrantStore,
} from './grants';
export { postgresSpentStates, postgresStandingGrants } from './grants';
export type {
  PostgresPrincipalCredentialEntry,
  PostgresPrincipalCredentialsOptions,
  PostgresPrincipalCredentialStore,
} from './principal-credentials';
export { postgresPrincipalCredentials } from './principal-credentials';
export type { PostgresTaskRecordsOptions, PostgresTaskRecordStore } from './tasks';
export { postgresTaskRecords } from './tasks';
