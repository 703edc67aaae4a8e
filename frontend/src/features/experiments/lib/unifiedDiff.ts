import { applyPatch, parsePatch } from 'diff';

export type DiffLineKind = 'add' | 'del' | 'ctx' | 'hunk' | 'meta';

export interface DiffLine {
  kind: DiffLineKind;
  text: string;
  oldNo: number | null;
  newNo: number | null;
}

/**
 * A unified diff as rows to render: hunk headers, context, additions and removals with their
 * old and new line numbers. Parsed with the `diff` package; a text it cannot parse is shown
 * as plain lines (kind "meta") rather than hidden.
 */
export function diffRows(unified: string): DiffLine[] {
  let patches;
  try {
    patches = parsePatch(unified);
  } catch {
    return unified.split('\n').map((text) => ({ kind: 'meta', text, oldNo: null, newNo: null }));
  }
  const rows: DiffLine[] = [];
  for (const p of patches) {
    for (const h of p.hunks) {
      rows.push({ kind: 'hunk', text: `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`, oldNo: null, newNo: null });
      let o = h.oldStart;
      let n = h.newStart;
      for (const line of h.lines) {
        const sign = line[0];
        const text = line.slice(1);
        if (sign === '+') rows.push({ kind: 'add', text, oldNo: null, newNo: n++ });
        else if (sign === '-') rows.push({ kind: 'del', text, oldNo: o++, newNo: null });
        else if (sign === '\\') rows.push({ kind: 'meta', text: line, oldNo: null, newNo: null });
        else rows.push({ kind: 'ctx', text, oldNo: o++, newNo: n++ });
      }
    }
  }
  if (rows.length === 0 && unified.trim()) {
    return unified.split('\n').map((text) => ({ kind: 'meta', text, oldNo: null, newNo: null }));
  }
  return rows;
}

/** Lines added and removed by a diff. */
export function diffStats(rows: DiffLine[]): { added: number; removed: number } {
  return {
    added: rows.filter((r) => r.kind === 'add').length,
    removed: rows.filter((r) => r.kind === 'del').length,
  };
}

/**
 * The prompt after applying the diff, for a preview while editing; null when it does not
 * apply (the server validates it again with its guardrails and says why).
 */
export function previewPatch(base: string, unified: string): string | null {
  try {
    const out = applyPatch(base, unified);
    return out === false ? null : out;
  } catch {
    return null;
  }
}
