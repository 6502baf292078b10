// Every export here is public API of @toolgate/audit.

// The log
export type { AuditEntry, AuditFailureMode, AuditLog, AuditLogOptions } from './audit-log';
export { auditLog } from './audit-log';
export type { AuditEventMap } from './attached';
export { policyRuleOf } from './rule';
export { RECORD_FIELDS } from './record';

// Stores
export type { InMemoryAuditStore } from './memory-store';
export { inMemoryAuditStore } from './memory-store';

// Reading a log back
export type { AuditHeadVerification, AuditSource, AuditVerification, VerifyAuditLogOptions } from './verify';
export { verifyAuditLog, verifyAuditLogHead } from './verify';
export type { AuditCheckpoint, AuditCheckpointOptions } from './checkpoint';
export { parseAuditHead, parseCheckpoint } from './checkpoint';
export type { AuditExport, ExportAuditLogOptions } from './export';
export { AuditLogFormatError, exportAuditLog, parseAuditLog } from './export';

// Keys
export type { AuditDigestKey, AuditPublicKey, AuditSigningKey } from './keys';
export { auditPublicKey, generateAuditKeys } from './keys';

// Errors
export { AuditConfigError, AuditUnavailableError } from './errors';

// The record types live in core, beside the AuditStore port
export type {
  AuditHead,
  AuditJournal,
  AuditJournalEntry,
  AuditRecord,
  AuditSeal,
  AuditStore,
} from '@toolgate/core';
