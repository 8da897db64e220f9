/** What `verify` says about the stored records' integrity checks (types and text, no I/O). */
import type { CheckCounts, IntegrityReport } from '../db/queries/integrity-checks.js';

/** Whether every stored record that could be checked holds. */
export function integrityHolds(report: IntegrityReport): boolean {
  return report.mismatchTotal === 0;
}

/** The report as text lines: the counts of both checks, then the records that failed one. */
export function formatIntegrity(report: IntegrityReport): string[] {
  const counts = (c: CheckCounts) =>
    `${c.ok} ok, ${c.mismatch} mismatch, ${c.unknown} unknown, ${c.unchecked} not checked`;
  const lines = [
    `integrity: ledgerHash recomputed: ${counts(report.hash)}`,
    `integrity: signature recovered to from (EVM senders): ${counts(report.signature)}`,
  ];
  if (report.mismatchTotal === 0) return lines;
  lines.push(
    `integrity: ${report.mismatchTotal} record(s) not what their sender signed (stored as served; see hash_check / signature_check)`,
  );
  for (const m of report.mismatches) {
    lines.push(`  rawId ${m.rawId} (${m.ledgerHash}): ${m.checks.join(' and ')} mismatch`);
  }
  if (report.mismatchTotal > report.mismatches.length) {
    lines.push(`  … and ${report.mismatchTotal - report.mismatches.length} more`);
  }
  return lines;
}
