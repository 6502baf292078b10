// Every export here is public API of @toolgate/store-sqlite.

export type { SqliteArtifactsOptions, SqliteArtifactStore } from './artifacts';
export type { SqliteAuditStore, SqliteAuditStoreOptions } from './audit';
export { sqliteAuditStore } from './audit';
export type { SqliteAuditJournal, SqliteAuditJournalOptions } from './audit-journal';
export { sqliteAuditJournal } from './audit-journal';
export { sqliteArtifacts } from './artifacts';
export type { SqliteCheckInsOptions, SqliteCheckInStore } from './check-ins';
export { sqliteCheckIns } from './check-ins';
export type { SqliteDatabase, SqliteStoreOptions } from './connection';
export { SqliteStoreError } from './errors';
export type { SqlitePinsOptions, SqlitePinStore } from './pins';
export { sqlitePins } from './pins';
export type {
  SqliteSpentStatesOptions,
  SqliteSpentStateStore,
  SqliteStandingGrantsOptions,
  SqliteStandingGrantStore,
} from './grants';
export { sqliteSpentStates, sqliteStandingGrants } from './grants';
export type {
  PrincipalCredentialEntry,
  SqlitePrincipalCredentialsOptions,
  SqlitePrincipalCredentialStore,
} from './principal-credentials';
export { sqlitePrincipalCredentials } from './principal-credentials';
export type { SqliteTaskRecordsOptions, SqliteTaskRecordStore } from './tasks';
export { sqliteTaskRecords } from './tasks';
