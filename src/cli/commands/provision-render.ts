import type { AgentRxError } from '../../core/errors.js';
import type { PruneReport, VersionView } from '../../core/provision/provisioner.js';
import type { HostVersion } from '../../core/provision/versioned-resources.js';
import type { CliIo } from '../cli-io.js';

/** `2026-04-01T00:00:05Z` (seconds precision), or `-` when the host gave no time. */
export function isoSeconds(ms: number): string {
  return ms > 0 ? new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z') : '-';
}

/** The first 8 hex digits of a digest, or `-` when the store does not know the version. */
export function digest8(digest: string | undefined): string {
  return digest === undefined ? '-' : digest.slice(0, 8);
}

/** Writes `rows` (the first one the header) as aligned columns, two spaces apart. */
export function writeTable(rows: readonly (readonly string[])[], io: CliIo): void {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  for (const row of rows) io.out.write(`${row.map((cell, c) => (c === row.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ')}\n`);
}

/** `ls`: one row (or JSON line) per version, newest first: name, id, digest8, created, tags, archived. */
export function renderVersions(versions: readonly VersionView[], json: boolean, io: CliIo): void {
  if (json) {
    for (const v of versions) {
      io.out.write(
        `${JSON.stringify({ name: v.name, id: v.id, base: v.base, digest: v.digest ?? null, created: isoSeconds(v.createdAt), tags: v.tags, archived: v.archived, stored: v.stored })}\n`,
      );
    }
    return;
  }
  writeTable(
    [
      ['NAME', 'ID', 'DIGEST', 'CREATED', 'TAGS', 'ARCHIVED'],
      ...versions.map((v) => [v.name, v.id, digest8(v.digest), isoSeconds(v.createdAt), v.tags.length > 0 ? v.tags.join(',') : '-', v.archived ? 'yes' : 'no']),
    ],
    io,
  );
}

/** `prune`: one line (or JSON line) per version: what was (or would be) archived, what was kept, what failed. */
export function renderPrune(report: PruneReport, json: boolean, verb: string, io: CliIo): void {
  const failed = report.failed;
  const rows: { action: string; v: HostVersion; error?: AgentRxError }[] = [
    ...report.archived.map((v) => ({ action: report.dryRun ? `would ${verb}` : `${verb}d`, v })),
    ...(failed ? [{ action: 'failed', v: failed.version, error: failed.error }] : []),
    ...report.kept.map((v) => ({ action: 'kept', v })),
  ];
  if (json) {
    for (const r of rows) {
      io.out.write(
        `${JSON.stringify({ action: r.action, name: r.v.name, id: r.v.id, created: isoSeconds(r.v.createdAt), dryRun: report.dryRun, ...(r.error ? { error: r.error.message } : {}) })}\n`,
      );
    }
    return;
  }
  if (rows.length === 0) return;
  writeTable([['ACTION', 'NAME', 'ID', 'CREATED'], ...rows.map((r) => [r.action, r.v.name, r.v.id, isoSeconds(r.v.createdAt)])], io);
}
